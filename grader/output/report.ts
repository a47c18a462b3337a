// How a grade looks in a terminal.
import chalk from 'chalk'
import type { Stage } from '#harness/course.ts'
import { describeResponse, toCurl, type Exchange } from '#harness/http.ts'
import type { PgServer } from '#harness/postgres.ts'
import type { KeptServer } from '../engine/keep.ts'
import { isFailure, type CheckResult } from '../engine/checkResult.ts'
import type { GradeResult } from '../engine/runner.ts'
import { isNotRun } from '../engine/startFailure.ts'

const indent = (text: string, pad: string) =>
  text
    .split('\n')
    .map((line) => pad + line)
    .join('\n')

export function printHeader(stage: Stage, seed: number, where: string) {
  console.log(chalk.bold(`\nStage ${stage.number} · ${stage.title}`) + chalk.dim(`  (${where}, seed ${seed})`))
}

/**
 * For a grade's onDatabaseStart: an embedded PostgreSQL (stage 6) takes
 * seconds to start before the first check, so the terminal says so while it
 * starts, and then how long it took, on the same line.
 */
export function printDatabaseStart(stage: Stage): (server: Pick<PgServer, 'kind' | 'startMs'> | undefined) => void {
  process.stdout.write(chalk.dim(`  starting PostgreSQL for stage ${stage.number} …`))
  return (server) => {
    if (!server) return console.log(chalk.dim(' did not start'))
    console.log(chalk.dim(server.kind === 'external' ? " using LAB_DATABASE_URL's server" : ` started in ${(server.startMs / 1000).toFixed(1)} s`))
  }
}

/** For one grade's onCheckStart: prints each stage's heading before its first check (a new grade prints them anew). */
export function stageHeadings(graded: number): (stage: Stage) => void {
  let last: number | undefined
  return (stage) => {
    if (stage.number === last) return
    last = stage.number
    console.log(chalk.dim(`  ${stage.number === graded ? `stage ${stage.number}` : `stage ${stage.number} (regression)`}`))
  }
}

export function printCheck(r: CheckResult) {
  if (isNotRun(r)) return console.log(chalk.dim(`  – ${r.title} [${r.id}] not run`))
  if (r.status === 'skipped') return console.log(chalk.dim(`  – ${r.title} [${r.id}] ${r.message}`))
  // Left unjudged by another check's failure (its message names it): no ✗, no points, no hint of its own.
  if (r.status === 'not-judged') {
    console.log(chalk.dim(`  – ${r.title} [${r.id}] ${chalk.dim(`0/${r.maxPoints}`)} ${r.message}`))
    for (const note of r.notes) console.log(chalk.dim(indent(note, '      ↳ ')))
    return
  }
  const mark = r.passed ? chalk.green('✓') : chalk.red('✗')
  const pts = chalk.dim(`${r.points}/${r.maxPoints}`)
  const time = chalk.dim(`${(r.durationMs / 1000).toFixed(1)} s`)
  console.log(`  ${mark} ${r.title} ${chalk.dim(`[${r.id}]`)} ${pts} ${time}`)
  for (const note of r.notes) console.log(chalk.cyan(indent(note, '      ↳ ')))
  if (r.passed) return
  const label = r.status === 'timeout' ? 'timed out' : r.status === 'error' ? 'could not run' : 'failed'
  console.log(chalk.red(indent(`${label}: ${r.message}`, '      ')))
  const f = r.failure
  if (f?.exchange) printExchange(f.exchange)
  if (f?.expected !== undefined) console.log(indent(`expected: ${f.expected}`, '      '))
  if (f?.got !== undefined) console.log(indent(`got:      ${f.got}`, '      '))
  console.log(chalk.yellow(indent(`hint: ${r.hint}`, '      ')))
  if (f?.serverLog) console.log(chalk.dim(indent(`server log (last lines):\n${f.serverLog}`, '      ')))
}

function printExchange(e: Exchange) {
  console.log(chalk.dim('      sent:'))
  console.log(indent(toCurl(e.request), '        '))
  console.log(chalk.dim('      came back:'))
  console.log(indent(describeResponse(e), '        '))
}

export function printVerboseExchange(e: Exchange) {
  const status = e.response ? e.response.status : 'ERR'
  console.log(chalk.dim(`      → ${e.request.method} ${e.request.url} ${e.request.body?.slice(0, 160) ?? ''}`))
  console.log(chalk.dim(`      ← ${status} ${(e.response?.body ?? e.error ?? '').slice(0, 160)} (${e.ms} ms)`))
}

export function printSummary(g: GradeResult) {
  const passed = g.checks.filter((c) => c.status === 'pass')
  const failed = g.checks.filter(isFailure)
  const unjudged = g.checks.filter((c) => c.status === 'not-judged')
  const ran = g.checks.filter((c) => c.status !== 'skipped')
  const verdict = g.passed ? chalk.green.bold('PASSED') : chalk.red.bold('FAILED')
  const counts = `${passed.length} of ${ran.length} checks${unjudged.length ? ` (${failed.length} failed, ${unjudged.length} not judged)` : ''}`
  console.log(`\n${verdict}  score ${g.score}/${g.maxScore} · ${counts} · ${(g.durationMs / 1000).toFixed(1)} s`)
  console.log(`seed ${g.seed} · rerun: ${chalk.bold(g.rerun)}`)
  const skipped = g.checks.filter((c) => c.status === 'skipped')
  // Each skipped check's line above says why (a --server command, or a stage on PostgreSQL).
  if (skipped.length) console.log(chalk.dim(`${skipped.length} check(s) skipped, no points either way: ${skipped.map((c) => c.id).join(', ')}`))
  // Each not-judged line names the failed check that left it unjudged: fixing that one judges it.
  if (unjudged.length)
    console.log(
      chalk.dim(
        `${unjudged.length} check(s) not judged, no points: ${unjudged.map((c) => `${c.id}${c.blockedBy ? ` (needs ${c.blockedBy})` : ''}`).join(', ')}`,
      ),
    )
  const notRun = g.checks.filter(isNotRun).length
  if (notRun) console.log(chalk.red(`the server did not start: ${notRun} other check(s) not run`))
  // A slow start is the machine, not the learner's code: said, never failed.
  if (g.serverStartMs > SLOW_START_MS)
    console.log(chalk.dim(`the server took ${(g.serverStartMs / 1000).toFixed(1)} s to start (a busy machine; no check's time limit counts it)`))
}

const SLOW_START_MS = 5_000

export function printKept(k: KeptServer) {
  console.log(chalk.bold('\nkept: the server of the first failure is still running, with the state that failed'))
  console.log(`  url:          ${k.url}`)
  console.log(`  admin token:  ${k.adminToken}`)
  for (const c of k.clients) console.log(`  client ${c.name || c.id}: api key ${c.apiKey}, accounts ${c.accounts.join(', ') || '(none)'}`)
  console.log(`  database:     ${k.dbPath}`)
  console.log(`  server log:   ${k.log}`)
  console.log(`  ledger:       curl -s ${k.url}/admin/ledger -H 'Authorization: Bearer ${k.adminToken}'`)
  console.log(`  stop it:      ${k.stop}`)
}
