// Every sentence the grader's terminal output is built of, in English (the
// source), each under an id, with {placeholders} for what a run fills in;
// the packs translate them. A check's own sentences are templates too, next
// to the check (phrase.ts); the evidence (requests, bodies, server logs) is
// shown as it came.
import type { Lang } from './language.ts'
import { fill, registerTemplate, type ValuesOf } from './phrase.ts'

export const MESSAGES = {
  // A grade's header and the stage headings above its checks (grader/output/report.ts).
  'header.stage': 'Stage {number} · {title}',
  'header.where': '({where}, seed {seed})',
  // Above a grade of someone else's code that runs with no isolation at all (harness/isolation.ts).
  'header.unconfined':
    'NOT ISOLATED: the code in {where} runs as your own user, with no sandbox, and may read and write whatever you can (docs/instructors.md)',
  'heading.stage': 'stage {number}',
  'heading.regression': 'stage {number} (regression)',
  'database.starting': 'starting PostgreSQL for stage {number} …',
  'database.notStarted': 'did not start',
  'database.external': "using LAB_DATABASE_URL's server",
  'database.started': 'started in {seconds} s',
  // A check's line and the headings of its failure.
  'check.notRun': 'not run',
  'failure.failed': 'failed: {message}',
  'failure.timedOut': 'timed out: {message}',
  'failure.error': 'could not run: {message}',
  'failure.sent': 'sent:',
  'failure.cameBack': 'came back:',
  'failure.expected': 'expected: {value}',
  'failure.got': 'got:      {value}',
  'failure.hint': 'hint: {hint}',
  'failure.serverLog': 'server log (last lines):\n{log}',
  // The summary under a grade.
  'summary.passed': 'PASSED',
  'summary.failed': 'FAILED',
  'summary.line': '{verdict}  stage {number} score {score}/{maxScore} · {counts} · {seconds} s',
  'summary.counts': '{passed} of {ran} checks',
  'summary.countsUnjudged': '{passed} of {ran} checks ({failed} failed, {unjudged} not judged)',
  'summary.regression': "earlier stages' checks (regression, not in the score): {passed} of {ran} passed",
  'summary.rerun': 'seed {seed} · rerun: {rerun}',
  'summary.skipped': '{count} check(s) skipped, no points either way: {ids}',
  'summary.unjudged': '{count} check(s) not judged, no points: {ids}',
  'summary.needs': '{id} (needs {check})',
  'summary.notRun': 'the server did not start: {count} other check(s) not run',
  'summary.notGraded': 'NOT GRADED  stage {number} · {why} · {seconds} s',
  'summary.notGraded.notStarted': 'the server did not start, so no check judged your code: the 0 is no verdict on it',
  'summary.notGraded.refused': 'the answer was refused, so no check judged your code',
  'summary.slowStart': "the server took {seconds} s to start (a busy machine; no check's time limit counts it)",
  // --repeat N (grader/cli/grade.ts).
  'repeat.run': 'run {run}/{runs} seed {seed}: {score}/{maxScore} ({seconds} s)',
  'repeat.summary': '{verdict}  {passed}/{runs} runs passed',
  'repeat.rerun': 'rerun: {rerun}  (failed: {ids})',
  'repeat.skipped': '{count} check(s) skipped in every run (no points either way; run once to see why): {ids}',
  // The line after a verdict (grader/output/nextStep.ts).
  'next.blocked': 'next: nothing failed here, but it needs {checks} to pass first: {command}',
  'next.unjudged': 'next: nothing failed here, but some checks could not be judged',
  'next.fix': 'next: fix the first ✗ above (its hint says where to look); more hints: {hintCommand}; rerun: {rerun}',
  'next.fullGrade': 'next: the full grade, earlier stages included: {command}',
  'next.capstone': 'next: the capstone, every stage against a whole day of traffic: npm run replay -- all',
  'next.stage': 'next: stage {number} · {title}: read {readme}, then {command}',
  // grade -- all: a stage not started, and the progress table (grader/output/progress.ts).
  'all.notStarted': '· not started: its learner files are still the starters, so it is not graded ({command} grades it anyway)',
  'progress.heading': 'Progress',
  'progress.stage': 'stage {number}',
  'progress.passed': 'passed',
  'progress.failed': 'failed',
  'progress.notStarted': 'not started',
  'progress.regression': 'regression failing: {ids}',
  'progress.next': 'next: stage {number} ({title}) — {command}',
  'progress.capstone': 'next: the capstone — npm run replay -- all (every stage passes)',
  // --keep: the server of the first failure, left running (grader/output/report.ts).
  'kept.heading': 'kept: the server of the first failure is still running, with the state that failed',
  'kept.url': '  url:          {url}',
  'kept.adminToken': '  admin token:  {token}',
  'kept.client': '  client {name}: api key {apiKey}, accounts {accounts}',
  'kept.noAccounts': '(none)',
  'kept.database': '  database:     {path}',
  'kept.log': '  server log:   {path}',
  'kept.ledger': '  ledger:       {command}',
  'kept.stop': '  stop it:      {command}',
  // A command line the grader cannot read (harness/cliArgs.ts): one line, then the usage.
  'usage.unknownOption': 'unknown option {option}',
  'usage.unexpectedArgument': 'unexpected argument {argument}: this command takes none',
  'usage.needsValue': '{option} needs a value',
  'usage.takesNoValue': '{option} takes no value',
  // npm run watch.
  'watch.stopped': 'stopped at the first failure: {count} check(s) not run (--all runs them all)',
  'watch.watching': 'watching {folder}: save a file to grade again, Ctrl-C to stop',
  // npm run hint.
  'hint.title': 'Stage {number} · {title}: hint {count} of {total}',
  'hint.next': 'next: npm run hint -- {number} shows hint {following}',
  'hint.last': 'that was the last hint; solutions/{folder}/ holds the reference answer',
  'hint.reset': 'stage {number}: hints hidden again',
  // The one line of a command stopped by Ctrl-C (harness/processes.ts): no verdict.
  interrupted: 'interrupted',
  // A grade that ended in an error of the grader's own (a bug to report), before its stack.
  graderFailed: 'the grader itself failed:',
  // A bare npm run grade: the stage it picked, and why (grader/cli/firstUnpassed.ts).
  'pick.ungraded': 'stage {number} ({slug}): the first stage not yet passed (no full grade of it yet)',
  'pick.failed': 'stage {number} ({slug}): the first stage not yet passed (its last full grade failed)',
  'pick.starter': 'stage {number} ({slug}): the first stage not yet passed (its files are the starter again)',
  'pick.allPassed':
    'every stage passed its last full grade: nothing left to grade (npm run grade -- N grades one again; next: the capstone, npm run replay -- all)',
  // npm run watch's keys, on a terminal (grader/cli/watchKeys.ts).
  'watch.keys': 'keys: h hint · n next stage · a all checks · q quit',
  'watch.queued': '{key}: when this grade ends',
  'watch.lastStage': 'stage {number} is the last stage: there is no next one to watch (next: the capstone, npm run replay -- all)',
  // npm run reset (grader/cli/reset.ts).
  'reset.overwrite': 'stage {number} ({slug}): these files in {folder} will be overwritten with the starter, and what you wrote in them lost:',
  'reset.missing': '{path} (missing: written anew)',
  'reset.same': 'already the starter, left as they are: {files}',
  'reset.nothing': 'stage {number} ({slug}): the files you edit in {folder} are the starter already; nothing to restore',
  'reset.confirm': 'Restore them? [y/N] ',
  'reset.declined': 'nothing restored',
  'reset.needsYes': 'nothing restored: there is no terminal to confirm on; npm run reset -- {number} --yes overwrites {files} with the starter',
  'reset.done': 'stage {number}: {count} file(s) restored to the starter; grade it: npm run grade -- {number}',
  'reset.noHistory':
    "cannot restore stage {number}: the starters come from this checkout's git history, and git could not read it ({error}); a fresh copy of the course has them",
  'reset.notInHistory': "cannot restore {path}: no commit of this checkout's git history holds its starter (grader/policing/starters.sha256); nothing restored",
  'reset.link': 'cannot restore stage {number}: {path} is a link or not a plain file or folder; nothing restored',
} as const

export type MessageId = keyof typeof MESSAGES

for (const [id, english] of Object.entries(MESSAGES)) registerTemplate(id, english)

/** Message `id` in `lang`, its placeholders filled in one pass (a value holding braces stays as it is). */
export function t<I extends MessageId>(lang: Lang, id: I, ...[values]: ValuesOf<(typeof MESSAGES)[I]>): string {
  return fill(lang, id, MESSAGES[id], values)
}
