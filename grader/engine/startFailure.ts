// What a server that did not start printed, read for the learner: its first
// error as file:line (a compile error, or the thrown error's first frame in
// their code), and the limit it ran into, if any. The results themselves are
// unrunResults.ts's.
import { relative } from 'node:path'
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import { gradingLimitVerdict, endFromText } from '#harness/limits.ts'
import { repoRoot } from '#harness/paths.ts'
import { noteSaid } from '#harness/limitCounters.ts'
import { STUCK_AT_LIMIT } from '#harness/spawnServer.ts'

/** esbuild's compile errors: "/path/file.ts:21:10: ERROR: Unexpected "="". */
const COMPILE_ERROR = /^(\S.*?):(\d+):(\d+): ERROR: (.*)$/m
/** The thrown error's own line: "TypeError: x is not a function". */
const ERROR_LINE = /^(?:Uncaught )?([A-Z]\w*(?:Error|Exception)\b.*)$/m
/** A stack frame: "at fn (/path/file.ts:12:5)" or "at /path/file.ts:12:5". */
const FRAME = /^\s+at (?:.*?\()?((?:file:\/\/)?\/[^():]+):(\d+):(\d+)\)?$/gm

const shortPath = (path: string) => {
  const plain = path.replace(/^file:\/\//, '')
  const rel = relative(repoRoot, plain)
  return rel.startsWith('..') ? plain : rel
}

/**
 * The first error a failed start printed, as "file:line:col: message", or
 * undefined when the log holds no recognisable error (a hang, a silent exit).
 * Frames inside node_modules or Node itself are skipped: the learner's file
 * (or the bank's, for a bad setting) is the one to open.
 */
export function firstError(log: string): string | undefined {
  const compile = COMPILE_ERROR.exec(log)
  if (compile) return `${shortPath(compile[1]!)}:${compile[2]}:${compile[3]}: ${compile[4]}`
  const error = ERROR_LINE.exec(log)
  if (!error) return undefined
  for (const frame of log.matchAll(FRAME)) {
    if (frame[1]!.includes('/node_modules/')) continue
    return `${shortPath(frame[1]!)}:${frame[2]}:${frame[3]}: ${error[1]}`
  }
  return error[1]
}

/** Stack frames inside node_modules or Node itself: nothing a learner can open. */
const FOREIGN_FRAME = /^\s+at .*(?:\/node_modules\/|\(node:|at node:).*\n/gm

/** How spawnServer.ts says the server died while starting: "the server exited with code 152 before it listened.". */
const DIED = /^the server (?:exited with code \d+|killed by SIG[A-Z0-9]+) (?:before it listened|while starting)\b/

/** The first line of a start that is alive but stuck at a limit (spawnServer.ts, atCeiling): the limit's sentence is the rest of it. */
const STUCK = new RegExp(`^${STUCK_AT_LIMIT}(.*)\\.$`, 'm')

/**
 * The limit (limits.ts) a server that did not start ran into, as "it used
 * more than 1024 MB of memory, …", or undefined: the one it died of, or the
 * one it was found stuck at when its start reached the ceiling.
 */
export function startLimitVerdict(reason: string): Line | undefined {
  const stuck = STUCK.exec(reason)
  if (stuck) return stuck[1]
  const died = DIED.exec(reason)
  return died ? gradingLimitVerdict(endFromText(died[0], reason), 'it') : undefined
}

/** What to say after a start's limit: the reason, without a first line that already is the limit. */
export const afterLimit = (reason: string) => reason.replace(STUCK, '').replace(/^\n/, '')

const say = phrases('startFailure', {
  notStarted: 'the server did not start: {evidence}',
  exitedWithCode: 'exited with code {code}',
  killedBy: 'killed by {signal}',
  exited: 'exited',
  diedBeforeListening: 'the server {exit} before it listened.',
  diedWhileStarting: 'the server {exit} while starting.',
  noListeningLine: 'did not print "listening on http://127.0.0.1:PORT" within {seconds} s',
  noHealth: 'GET /health never answered 200 within {seconds} s (last: {last})',
  stuckStillRunning: 'It is still running, but {what}.',
  atCeiling: 'the server is still running but {what} (the start-up ceiling; LAB_START_TIMEOUT_S raises it){below}.',
  belowLimits: '; it is below every limit ({counters})',
})

/** How a process ended, as spawnServer.ts records it ("exited with code 1", "killed by SIGKILL"), in the learner's language. */
export function exitSaid(exit: string): Line {
  const code = /^exited with code (-?\d+)$/.exec(exit)
  if (code) return say('exitedWithCode', { code: code[1]! })
  const signal = /^killed by (SIG[A-Z0-9]+)$/.exec(exit)
  if (signal) return say('killedBy', { signal: signal[1]! })
  return exit === 'exited' ? say('exited') : exit
}

// How spawnServer.ts words a start that failed (the grader's words, read back here the way startLimitVerdict reads them).
const DIED_LINE = /^the server (exited with code -?\d+|killed by SIG[A-Z0-9]+|exited) (before it listened|while starting)\.$/
const STUCK_LINE = /^It is still running, but (.*)\.$/
const CEILING_LINE = /^the server is still running but (.*) \(the start-up ceiling; LAB_START_TIMEOUT_S raises it\)(?:; it is below every limit \((.*)\))?\.$/
const NO_LISTENING = /^did not print "listening on http:\/\/127\.0\.0\.1:PORT" within (\d+(?:\.\d+)?) s$/
const NO_HEALTH = /^GET \/health never answered 200 within (\d+(?:\.\d+)?) s \(last: (.*)\)$/s

/** What the start waited for in vain, in the learner's language. */
function waitedSaid(what: string): Line {
  const listening = NO_LISTENING.exec(what)
  if (listening) return say('noListeningLine', { seconds: listening[1]! })
  const health = NO_HEALTH.exec(what)
  return health ? say('noHealth', { seconds: health[1]!, last: health[2]! }) : what
}

/** The reason's first line, the grader's own words on how the start failed, in the learner's language; the rest (the log) as it came. */
export function reasonSaid(reason: string): Line[] {
  const end = reason.indexOf('\n')
  const [first, rest] = end < 0 ? [reason, undefined] : [reason.slice(0, end), reason.slice(end + 1)]
  const died = DIED_LINE.exec(first)
  const stuck = STUCK_LINE.exec(first)
  const ceiling = CEILING_LINE.exec(first)
  const said = died
    ? say(died[2] === 'while starting' ? 'diedWhileStarting' : 'diedBeforeListening', { exit: exitSaid(died[1]!) })
    : stuck
      ? say('stuckStillRunning', { what: waitedSaid(stuck[1]!) })
      : ceiling
        ? say('atCeiling', { what: waitedSaid(ceiling[1]!), below: ceiling[2] === undefined ? '' : say('belowLimits', { counters: noteSaid(ceiling[2]) }) })
        : first
  return rest === undefined ? [said] : [said, rest]
}

/**
 * The message of the first check when the shared server did not start: the
 * limit it hit, if any, its first error, then the log. Only its opening words
 * are the grader's; the rest is what the server and the limits said.
 */
export function startFailureMessage(reason: string, stuckAt?: Line): Phrase {
  const first = firstError(reason)
  const limit = stuckAt ?? startLimitVerdict(reason)
  const rest = reasonSaid(afterLimit(reason).replace(FOREIGN_FRAME, ''))
  return say('notStarted', { evidence: listOf([...(limit ? [limit] : []), ...(first ? [first] : []), ...rest], 'lines') })
}
