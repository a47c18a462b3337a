// How a grade looks in a terminal, in the learner's language: the words are
// the catalog's (#harness/i18n/messages.ts), the evidence is shown as it came.
import chalk from 'chalk'
import type { Stage } from '#harness/course.ts'
import { describeResponse, toCurl, type Exchange } from '#harness/http.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { checkText, stageText } from '#harness/i18n/packs.ts'
import { say } from '#harness/i18n/phrase.ts'
import type { Isolation } from '#harness/isolation.ts'
import type { PgServer } from '#harness/postgres.ts'
import { checksFor } from '../checks/index.ts'
import type { KeptServer } from '../engine/keep.ts'
import { isFailure, type CheckResult } from '../engine/checkResult.ts'
import type { GradeResult } from '../grade.ts'
import { isNotRun } from '../engine/unrunResults.ts'

const indent = (text: string, pad: string) =>
  text
    .split('\n')
    .map((line) => pad + line)
    .join('\n')

export function printHeader(stage: Stage, seed: number, where: string, lang: Lang = 'en') {
  const heading = t(lang, 'header.stage', { number: stage.number, title: stageText(lang, stage).title })
  console.log(chalk.bold(`\n${heading}`) + chalk.dim(`  ${t(lang, 'header.where', { where, seed })}`))
}

/**
 * Above the header of a grade of someone else's code (--dir, --server) that
 * runs with no isolation at all: a grade of the course's own stages/ runs
 * the learner's own code, which may do as they may anyway.
 */
export function printUnconfined(isolation: Isolation, where: string, lang: Lang = 'en') {
  if (isolation === 'none') console.log(chalk.red.bold(`\n${t(lang, 'header.unconfined', { where })}`))
}

/**
 * For a grade's onDatabaseStart: an embedded PostgreSQL (stage 6) takes
 * seconds to start before the first check, so the terminal says so while it
 * starts, and then how long it took, on the same line.
 */
export function printDatabaseStart(stage: Stage, lang: Lang = 'en'): (server: Pick<PgServer, 'kind' | 'startMs'> | undefined) => void {
  process.stdout.write(chalk.dim(`  ${t(lang, 'database.starting', { number: stage.number })}`))
  return (server) => {
    if (!server) return console.log(chalk.dim(` ${t(lang, 'database.notStarted')}`))
    const how = server.kind === 'external' ? t(lang, 'database.external') : t(lang, 'database.started', { seconds: (server.startMs / 1000).toFixed(1) })
    console.log(chalk.dim(` ${how}`))
  }
}

/** For one grade's onCheckStart: prints each stage's heading before its first check (a new grade prints them anew). */
export function stageHeadings(graded: number, lang: Lang = 'en'): (stage: Stage) => void {
  let last: number | undefined
  return (stage) => {
    if (stage.number === last) return
    last = stage.number
    console.log(chalk.dim(`  ${t(lang, stage.number === graded ? 'heading.stage' : 'heading.regression', { number: stage.number })}`))
  }
}

/**
 * A result's title and hint in `lang`. The title is its check's, as the pack
 * translates it (looked up by id, since a check that did not run carries other
 * advice than its own hint, and a translation is stamped against the check's).
 * The hint is the check's translated, or that other advice said in `lang`.
 */
function resultText(lang: Lang, r: CheckResult): { title: string; hint: string } {
  const check = checksFor(r.stage).find((c) => c.id === r.id)
  if (!check) return { title: r.title, hint: say(lang, r.hint) }
  const own = checkText(lang, check)
  return { title: own.title, hint: r.hint === check.hint ? own.hint : say(lang, r.hint) }
}

export function printCheck(r: CheckResult, lang: Lang = 'en') {
  // The result keeps the English (--json is the same in every language): only what is printed is translated.
  const { title } = resultText(lang, r)
  if (isNotRun(r)) return console.log(chalk.dim(`  – ${title} [${r.id}] ${t(lang, 'check.notRun')}`))
  if (r.status === 'skipped') return console.log(chalk.dim(`  – ${title} [${r.id}] ${say(lang, r.message)}`))
  // Left unjudged by another check's failure (its message names it): no ✗, no points, no hint of its own.
  if (r.status === 'not-judged') {
    console.log(chalk.dim(`  – ${title} [${r.id}] ${chalk.dim(`0/${r.maxPoints}`)} ${say(lang, r.message)}`))
    for (const note of r.notes) console.log(chalk.dim(indent(say(lang, note), '      ↳ ')))
    return
  }
  const mark = r.passed ? chalk.green('✓') : chalk.red('✗')
  const pts = chalk.dim(`${r.points}/${r.maxPoints}`)
  const time = chalk.dim(`${(r.durationMs / 1000).toFixed(1)} s`)
  console.log(`  ${mark} ${title} ${chalk.dim(`[${r.id}]`)} ${pts} ${time}`)
  for (const note of r.notes) console.log(chalk.cyan(indent(say(lang, note), '      ↳ ')))
  if (r.passed) return
  for (const block of failureBlocks(r, lang)) console.log(FAILURE_STYLE[block.kind](indent(block.text, '      ')))
}

type FailureBlock = { kind: 'message' | 'label' | 'evidence' | 'hint' | 'log'; text: string }

const FAILURE_STYLE: Record<FailureBlock['kind'], (text: string) => string> = {
  message: chalk.red,
  label: chalk.dim,
  evidence: (text) => text,
  hint: chalk.yellow,
  log: chalk.dim,
}

/**
 * A failed check's account, block by block: what failed, the request as sent
 * (a curl line) and what came back, expected and got, the hint, the server's
 * last log lines. The terminal colours each kind; a platform's result
 * document (grader/output/gradescope.ts) shows them as plain text.
 */
export function failureBlocks(r: CheckResult, lang: Lang = 'en'): FailureBlock[] {
  const { hint } = resultText(lang, r)
  const label = r.status === 'timeout' ? 'failure.timedOut' : r.status === 'error' ? 'failure.error' : 'failure.failed'
  const f = r.failure
  const blocks: FailureBlock[] = [{ kind: 'message', text: t(lang, label, { message: say(lang, r.message) }) }]
  if (f?.exchange)
    blocks.push(
      { kind: 'label', text: t(lang, 'failure.sent') },
      { kind: 'evidence', text: indent(toCurl(f.exchange.request), '  ') },
      { kind: 'label', text: t(lang, 'failure.cameBack') },
      { kind: 'evidence', text: indent(describeResponse(f.exchange), '  ') },
    )
  if (f?.expected !== undefined) blocks.push({ kind: 'evidence', text: t(lang, 'failure.expected', { value: say(lang, f.expected) }) })
  if (f?.got !== undefined) blocks.push({ kind: 'evidence', text: t(lang, 'failure.got', { value: say(lang, f.got) }) })
  blocks.push({ kind: 'hint', text: t(lang, 'failure.hint', { hint }) })
  if (f?.serverLog) blocks.push({ kind: 'log', text: t(lang, 'failure.serverLog', { log: f.serverLog }) })
  return blocks
}

export function printVerboseExchange(e: Exchange) {
  const status = e.response ? e.response.status : 'ERR'
  console.log(chalk.dim(`      → ${e.request.method} ${e.request.url} ${e.request.body?.slice(0, 160) ?? ''}`))
  console.log(chalk.dim(`      ← ${status} ${(e.response?.body ?? e.error ?? '').slice(0, 160)} (${e.ms} ms)`))
}

/** PASSED or FAILED, as plain words (a platform's result document shows them as text). */
export const verdictWord = (passed: boolean, lang: Lang = 'en'): string => t(lang, passed ? 'summary.passed' : 'summary.failed')

/** PASSED or FAILED, coloured. */
export const verdictOf = (passed: boolean, lang: Lang = 'en'): string =>
  passed ? chalk.green.bold(verdictWord(true, lang)) : chalk.red.bold(verdictWord(false, lang))

/**
 * The verdict line, then the regression checks' tally when any ran: what the
 * terminal prints under a grade, and what an autograder platform shows above
 * its tests (grader/output/gradescope.ts), so both say the same score the same way.
 */
export function verdictLines(g: GradeResult, lang: Lang = 'en', verdict = verdictOf): string[] {
  // The score and its counts are the stage's own checks'; the regression checks get a line of their own, outside the score.
  const own = g.checks.filter((c) => !c.regression)
  const tally = { ...tallyOf(own), failed: own.filter(isFailure).length, unjudged: own.filter((c) => c.status === 'not-judged').length }
  const counts = tally.unjudged ? t(lang, 'summary.countsUnjudged', tally) : t(lang, 'summary.counts', tally)
  const seconds = (g.durationMs / 1000).toFixed(1)
  // Nothing was graded (docs/grade-result.md: gradable false): no score line, which would read as a verdict on the code.
  if (!g.gradable) {
    const why = t(lang, g.refused ? 'summary.notGraded.refused' : 'summary.notGraded.notStarted')
    return [t(lang, 'summary.notGraded', { number: g.stage, why, seconds })]
  }
  const line = { verdict: verdict(g.passed, lang), number: g.stage, score: g.score, maxScore: g.maxScore, counts, seconds }
  const regression = tallyOf(g.checks.filter((c) => c.regression))
  return [t(lang, 'summary.line', line), ...(regression.ran ? [t(lang, 'summary.regression', regression)] : [])]
}

export function printSummary(g: GradeResult, lang: Lang = 'en') {
  const unjudged = g.checks.filter((c) => c.status === 'not-judged')
  const lines = verdictLines(g, lang).join('\n')
  console.log(`\n${g.gradable ? lines : chalk.red.bold(lines)}`)
  console.log(t(lang, 'summary.rerun', { seed: g.seed, rerun: chalk.bold(g.rerun) }))
  const skipped = g.checks.filter((c) => c.status === 'skipped')
  // Each skipped check's line above says why (a --server command, or a stage on PostgreSQL).
  if (skipped.length) console.log(chalk.dim(t(lang, 'summary.skipped', { count: skipped.length, ids: skipped.map((c) => c.id).join(', ') })))
  // Each not-judged line names the failed check that left it unjudged: fixing that one judges it.
  if (unjudged.length) {
    const ids = unjudged.map((c) => (c.blockedBy ? t(lang, 'summary.needs', { id: c.id, check: c.blockedBy }) : c.id)).join(', ')
    console.log(chalk.dim(t(lang, 'summary.unjudged', { count: unjudged.length, ids })))
  }
  const notRun = g.checks.filter(isNotRun).length
  if (notRun) console.log(chalk.red(t(lang, 'summary.notRun', { count: notRun })))
  // A slow start is the machine, not the learner's code: said, never failed.
  if (g.serverStartMs > SLOW_START_MS) console.log(chalk.dim(t(lang, 'summary.slowStart', { seconds: (g.serverStartMs / 1000).toFixed(1) })))
}

const SLOW_START_MS = 5_000

/** How many of `checks` passed, out of those that ran (a skipped check did not). */
const tallyOf = (checks: GradeResult['checks']) => ({
  passed: checks.filter((c) => c.status === 'pass').length,
  ran: checks.filter((c) => c.status !== 'skipped').length,
})

export function printKept(k: KeptServer, lang: Lang = 'en') {
  console.log(chalk.bold(`\n${t(lang, 'kept.heading')}`))
  console.log(t(lang, 'kept.url', { url: k.url }))
  console.log(t(lang, 'kept.adminToken', { token: k.adminToken }))
  for (const c of k.clients)
    console.log(t(lang, 'kept.client', { name: c.name || c.id, apiKey: c.apiKey, accounts: c.accounts.join(', ') || t(lang, 'kept.noAccounts') }))
  console.log(t(lang, 'kept.database', { path: k.dbPath }))
  console.log(t(lang, 'kept.log', { path: k.log }))
  console.log(t(lang, 'kept.ledger', { command: `curl -s ${k.url}/admin/ledger -H 'Authorization: Bearer ${k.adminToken}'` }))
  console.log(t(lang, 'kept.stop', { command: k.stop }))
}
