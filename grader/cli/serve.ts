// npm run serve -- <stage> [--solution] [--port N] [--fresh] [--demo]
// Runs a stage's server on 127.0.0.1:3000 to try it by hand with curl, with
// one log line per request. Each stage keeps its own database file
// (bank-NN-slug.sqlite), because each stage's key table has another shape;
// --fresh starts from an empty one. --demo creates a client and two funded
// accounts and prints curl lines ready to paste.
//
// The admin token is new on every run (printed at the top), and the clock is
// the host's: LAB_CLOCK_NOW_MS is the grader's alone (CONTRACT.md, The clock).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgsOrExit } from '#harness/cliArgs.ts'
import { findStage, UnknownStageError, type Stage } from '#harness/course.ts'
import { createDemo, demoCurls } from './serveDemo.ts'
import { repoRoot } from '#harness/paths.ts'

const USAGE = `usage: npm run serve -- [<stage>] [--solution] [--port N] [--fresh] [--demo]

  <stage>      0, stage0, or a slug such as unique-key (default 0)
  --solution   serve the reference solution instead of stages/
  --port N     the port on 127.0.0.1 (default 3000)
  --fresh      start from an empty database (each stage keeps its own bank-NN-slug.sqlite)
  --demo       create a client and two funded accounts, and print curl lines to try them
  LAB_DB and LAB_ADMIN_TOKEN override the database file and the admin token
  (otherwise a new random token per run, printed at the start)`

const { values, positionals } = parseArgsOrExit(USAGE, {
  allowPositionals: true,
  options: {
    solution: { type: 'boolean', default: false },
    port: { type: 'string', default: '3000' },
    fresh: { type: 'boolean', default: false },
    demo: { type: 'boolean', default: false },
  },
})
if (positionals.length > 1) {
  console.error(`unexpected argument ${positionals[1]}: serve takes one stage`)
  console.error(USAGE)
  process.exit(2)
}
const stage = stageOrExit(positionals[0] ?? '0')
const dir = resolve(repoRoot, values.solution ? 'solutions' : 'stages', stage.folder)
const db = process.env.LAB_DB ?? resolve(repoRoot, `bank-${stage.folder}${values.solution ? '-solution' : ''}.sqlite`)
if (values.fresh) for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true })
// A token per run: one printed in a README would open every reader's bank.
const adminToken = process.env.LAB_ADMIN_TOKEN ?? `serve_${randomBytes(12).toString('hex')}`
console.log(`stage ${stage.number} · ${stage.title}\n  admin token: ${adminToken}\n  database:    ${db}`)
// The clock is the host's: a LAB_CLOCK_NOW_MS left in the shell would date transfers in 1970.
const { LAB_CLOCK_NOW_MS: shellClock, ...shellEnv } = process.env
if (shellClock !== undefined) console.log(`  LAB_CLOCK_NOW_MS=${shellClock} ignored: a served bank runs on the host's clock`)
const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, 'bank/main.ts')], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: { LAB_REQUEST_LOG: '1', ...shellEnv, LAB_STAGE_DIR: dir, LAB_PORT: values.port, LAB_DB: db, LAB_ADMIN_TOKEN: adminToken },
})
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill('SIGTERM'))
child.on('exit', (code) => process.exit(code ?? 0))

if (values.demo) {
  const url = `http://127.0.0.1:${values.port}`
  createDemo(url, adminToken).then(
    (demo) => console.log(demoCurls(url, adminToken, demo)),
    (error: Error) => {
      console.error(`--demo: ${error.message}`)
      child.kill('SIGTERM')
    },
  )
}

/** The stage named on the command line; an unknown one is the user's mistake: one line and the usage, exit 2. */
function stageOrExit(name: string): Stage {
  try {
    return findStage(name)
  } catch (error) {
    if (!(error instanceof UnknownStageError)) throw error
    console.error(error.message)
    console.error(USAGE)
    process.exit(2)
  }
}
