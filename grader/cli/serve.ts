// npm run serve -- <stage> [--solution] [--port N] [--fresh] [--demo] [--clock MS] [--lang L]
// Runs a stage's server on 127.0.0.1:3000 to try it by hand with curl, with
// one log line per request. Each stage keeps its own database file
// (bank-NN-slug.sqlite), because each stage's key table has another shape;
// --fresh starts from an empty one. --demo creates a client and two funded
// accounts and prints curl lines ready to paste.
//
// The admin token is new on every run (printed at the top), and the clock is
// the host's: a LAB_CLOCK_NOW_MS left in the shell is not passed on. --clock
// asks for the grader's kind of clock on purpose (a failing history's replay,
// grader/model/timelineReplay.ts): it stands at MS until PUT /admin/clock
// moves it, which the bank obeys only with a grader's kind of admin token
// (adm_ and 32 hex digits), so that is the token made then.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { languageOfCommandLine, languageOrExit, parseArgsOrExit } from '#harness/cliArgs.ts'
import { findStage, UnknownStageError, type Stage } from '#harness/course.ts'
import { say } from '#harness/i18n/phrase.ts'
import { type Lang, rememberLangFlag } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { SERVE_USAGE, usageText } from './usage.ts'
import { stageText } from '#harness/i18n/packs.ts'
import { createDemo, demoCurls } from './serveDemo.ts'
import { serveLine } from './serveLines.ts'
import { unknownStage } from './usageErrors.ts'
import { repoRoot } from '#harness/paths.ts'
import { isGraderToken, newGraderToken } from '#bank/auth.ts'
import { LATEST_INSTANT_MS } from '#bank/config.ts'

/** The usage, in the command line's language (grader/cli/usage.ts). */
const usage = (lang: Lang = languageOfCommandLine()) => usageText(SERVE_USAGE, lang)

const { values, positionals } = parseArgsOrExit(usage, {
  allowPositionals: true,
  options: {
    solution: { type: 'boolean', default: false },
    port: { type: 'string', default: '3000' },
    fresh: { type: 'boolean', default: false },
    demo: { type: 'boolean', default: false },
    clock: { type: 'string' },
    lang: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (values.help) {
  console.log(usage())
  process.exit(0)
}
const lang = languageOrExit(values.lang)
const tell = (line: Parameters<typeof say>[1]) => say(lang, line)
if (positionals.length > 1) {
  console.error(tell(serveLine('oneStage', { argument: positionals[1]! })))
  console.error(usage())
  process.exit(2)
}
const stage = stageOrExit(positionals[0] ?? '0')
const dir = resolve(repoRoot, values.solution ? 'solutions' : 'stages', stage.folder)
const db = process.env.LAB_DB ?? resolve(repoRoot, `bank-${stage.folder}${values.solution ? '-solution' : ''}.sqlite`)
if (values.fresh) for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true })
const clockMs = values.clock === undefined ? undefined : clockOrExit(values.clock)
// A token per run: one printed in a README would open every reader's bank.
const adminToken = process.env.LAB_ADMIN_TOKEN ?? (clockMs === undefined ? `serve_${randomBytes(12).toString('hex')}` : newGraderToken())
if (clockMs !== undefined && !isGraderToken(adminToken)) {
  console.error(tell(serveLine('clockToken')))
  process.exit(2)
}
rememberLangFlag(values.lang, lang)
console.log(t(lang, 'header.stage', { number: stage.number, title: stageText(lang, stage).title }))
console.log(tell(serveLine('adminToken', { token: adminToken })))
console.log(tell(serveLine('database', { file: db })))
if (clockMs !== undefined) console.log(tell(serveLine('clockStands', { ms: clockMs, iso: new Date(clockMs).toISOString() })))
// The clock is the host's unless --clock asks: a LAB_CLOCK_NOW_MS left in the shell would date transfers in 1970.
const { LAB_CLOCK_NOW_MS: shellClock, ...shellEnv } = process.env
if (shellClock !== undefined) console.log(tell(serveLine('shellClockIgnored', { ms: shellClock })))
const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, 'bank/main.ts')], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: {
    LAB_REQUEST_LOG: '1',
    ...shellEnv,
    LAB_STAGE_DIR: dir,
    LAB_PORT: values.port,
    LAB_DB: db,
    LAB_ADMIN_TOKEN: adminToken,
    ...(clockMs !== undefined ? { LAB_CLOCK_NOW_MS: String(clockMs) } : {}),
  },
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill('SIGTERM'))
child.on('exit', (code) => process.exit(code ?? 0))

if (values.demo) {
  const url = `http://127.0.0.1:${values.port}`
  createDemo(url, adminToken).then(
    (demo) => console.log(demoCurls(url, adminToken, demo, lang)),
    (error: Error) => {
      console.error(tell(serveLine('demoFailed', { error: error.message })))
      child.kill('SIGTERM')
    },
  )
}

/** --clock's value: whole milliseconds since the epoch, within what a date holds (CONTRACT.md, LAB_CLOCK_NOW_MS). */
function clockOrExit(text: string): number {
  const ms = Number(text)
  if (/^\d+$/.test(text) && Number.isSafeInteger(ms) && ms <= LATEST_INSTANT_MS) return ms
  console.error(tell(serveLine('clockValue', { text, latest: LATEST_INSTANT_MS })))
  console.error(usage())
  process.exit(2)
}

/** The stage named on the command line; an unknown one is the user's mistake: one line and the usage, exit 2. */
function stageOrExit(name: string): Stage {
  try {
    return findStage(name)
  } catch (error) {
    if (!(error instanceof UnknownStageError)) throw error
    console.error(tell(unknownStage(error)))
    console.error(usage())
    process.exit(2)
  }
}
