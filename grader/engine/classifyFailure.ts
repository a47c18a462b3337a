// What a check that threw comes to: a failed verdict, a timeout, or an error
// of the grader's own making, with the evidence a report shows. Pure: it reads
// what the servers and the HTTP client already know, so every class can be
// tested without starting a server.
import { CheckFailure } from '#harness/failure.ts'
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { endFromText, gradingLimitVerdict } from '#harness/limits.ts'
import type { Exchange } from '#harness/http.ts'
import { ServerStartError, type ServerProcess } from '#harness/spawnServer.ts'
import type { CheckResult, CheckStatus } from './checkResult.ts'
import { TimeoutError } from './checkTimer.ts'
import { NotJudged } from './check.ts'
import { afterLimit, exitSaid, startLimitVerdict } from './startFailure.ts'
import { ServerHungError } from './watchdog.ts'

/** What a server tells about itself after the fact: whether it died, and its last log lines. */
export type ServerView = Pick<ServerProcess, 'unexpectedExit' | 'logTail'>

/** The check's requests: the ones that ended, and the ones still waiting for an answer (oldest first). */
export type CheckTrace = { recorded: readonly Exchange[]; unanswered: Iterable<Exchange> }

export type ClassifiedFailure = {
  status: Exclude<CheckStatus, 'pass'>
  message: Line
  failure: CheckResult['failure']
  /** With 'not-judged': the check that fails for the missing precondition. */
  blockedBy?: string
  /** The server stopped answering (watchdog.ts): nothing after this check can be judged. */
  hung?: true
}

const say = phrases('classifyFailure', {
  serverDied: '{message} (the server {exit} during this check{limit})',
  hung: 'your server stopped answering during this check: {what}',
  extraAtLimit: 'an extra server instance did not start: {limit}\n{log}',
  extraNotStarted: 'an extra server instance did not start: {error}',
  limitSuffix: ': {verdict}',
})

/** `servers[0]` is the shared server; the rest are the extra instances the check started. */
export function classifyFailure(error: unknown, servers: readonly ServerView[], trace: CheckTrace): ClassifiedFailure {
  const classified = classifyError(error, trace)
  const { message, failure } = classified
  // Whatever the error looked like, a server that died explains it better.
  const deadServer = servers.find((s) => s.unexpectedExit)
  // A check left unjudged shows no failure of its own: no request, no log (unless a server died: that is a failure).
  if (classified.status === 'not-judged' && !deadServer) return classified
  const status = classified.status === 'not-judged' ? 'fail' : classified.status
  const log = (deadServer ?? (error instanceof ServerHungError ? error.server : servers[0]!)).logTail()
  // A one-line log is the "listening on" line: worth showing only when something went wrong with the server.
  const showLog = deadServer || status !== 'fail' || log.includes('\n')
  return {
    status,
    message: deadServer ? say('serverDied', { message, exit: exitSaid(deadServer.unexpectedExit ?? ''), limit: limitOf(deadServer) }) : message,
    failure: showLog ? { ...failure, serverLog: log } : failure,
    ...(classified.hung ? { hung: true as const } : {}),
  }
}

/** Lines of a dead server's log searched for the limit it hit: Node's fatal errors print a native stack after the message. */
const LIMIT_LOG_LINES = 60

/** ": it used more than 1024 MB of memory, …" when the dead server ran into a limit (limits.ts), or nothing. */
function limitOf(server: ServerView): Line {
  const verdict = gradingLimitVerdict(endFromText(`the server ${server.unexpectedExit}`, server.logTail(LIMIT_LOG_LINES)), 'it')
  return verdict ? say('limitSuffix', { verdict }) : ''
}

function classifyError(error: unknown, trace: CheckTrace): ClassifiedFailure {
  // It earns nothing, like a timeout, and the grade stops after it (grading.ts).
  if (error instanceof ServerHungError)
    return {
      status: 'fail',
      message: say('hung', { what: error.what }),
      failure: { exchange: [...trace.unanswered][0] ?? trace.recorded.at(-1) },
      hung: true,
    }
  if (error instanceof TimeoutError) return { status: 'timeout', message: error.said, failure: { exchange: [...trace.unanswered][0] ?? trace.recorded.at(-1) } }
  if (error instanceof CheckFailure) return { status: 'fail', message: error.said, failure: { ...error.details } }
  if (error instanceof NotJudged) return { status: 'not-judged', message: error.said, failure: undefined, blockedBy: error.blockedBy }
  if (error instanceof ServerStartError) {
    // One that died of a limit (limits.ts) is the submission's doing, not a server the grader could not start.
    const limit = error.limit ?? startLimitVerdict(error.message)
    if (limit) return { status: 'fail', message: say('extraAtLimit', { limit, log: afterLimit(error.message) }), failure: undefined }
    return { status: 'error', message: say('extraNotStarted', { error: error.message }), failure: undefined }
  }
  // A request that failed outright (connection refused, reset, garbage).
  const e = error as Error & { exchange?: Exchange }
  return { status: 'fail', message: e.message, failure: { exchange: e.exchange ?? trace.recorded.at(-1) } }
}
