// npm run grade -- [<stage>] --roster DIR: grades every checkout under DIR (the
// folder name is the learner's id), every stage by default, each stage on that
// learner's own stage folder, a few at a time, each (learner, stage) in its own
// grader child (submission.ts) with its own time limit, so one hanging stage
// costs only that stage; and keeps every result in the results store.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import chalk from 'chalk'
import pLimit from 'p-limit'
import type { Stage } from '#harness/course.ts'
import { InterruptedError, interrupted } from '#harness/processes.ts'
import { ResultsStore, DEFAULT_STORE } from './store.ts'
import { killMarked } from './strays.ts'
import { gradeSubmission, overlaysOf, removeOverlays, type SubmissionResult } from './submission.ts'

export const DEFAULT_TIME_LIMIT_S = 300
const MEMORY_MB = 512

export type RosterOptions = {
  /** The stages to grade, each on its own folder (every stage, unless the class is at one). */
  stages: Stage[]
  roster: string
  /** One seed for the whole class: every learner gets the same inputs. */
  seed: number
  json?: string
  store?: string
  timeLimitMs?: number
  jobs?: number
  /** Each checkout's servers run sandboxed (sandboxPolicy() decides). */
  sandbox: boolean
  /** Grade again what the store already holds a finished grading of, from this roster (--regrade). */
  regrade?: boolean
  /** Random histories per histories check (--histories); the grader's default when absent. */
  histories?: number
}

export class RosterError extends Error {}

/** The learners' checkouts: every folder directly under `roster` that is not hidden. */
export function listSubmissions(roster: string): Array<{ learner: string; checkout: string }> {
  let names: string[]
  try {
    names = readdirSync(roster)
  } catch {
    throw new RosterError(`--roster ${roster}: no such folder`)
  }
  const found = names
    .filter((name) => !name.startsWith('.') && statSync(join(roster, name), { throwIfNoEntry: false })?.isDirectory())
    .sort()
    .map((learner) => ({ learner, checkout: resolve(roster, learner) }))
  if (found.length === 0) throw new RosterError(`--roster ${roster}: no checkouts in it (one folder per learner)`)
  return found
}

export async function gradeRoster(o: RosterOptions): Promise<number> {
  const submissions = listSubmissions(o.roster)
  const origin = `roster ${o.roster}`
  const store = new ResultsStore(o.store ?? DEFAULT_STORE)
  // The class as it stands: `npm run scores` shows a learner the batch never grades as "not graded".
  store.listRoster(
    origin,
    submissions.map((s) => s.learner),
  )
  // A rerun (after an interrupt, say) grades only what this roster has not finished yet.
  const finished = new Set(o.regrade ? [] : store.finishedGradings(origin).map((g) => `${g.learner}\t${g.stage}`))
  const planned = submissions.flatMap((s) => o.stages.map((stage) => ({ ...s, stage })))
  const jobsToRun = planned.filter((j) => !finished.has(`${j.learner}\t${j.stage.number}`))
  const timeLimitMs = o.timeLimitMs ?? DEFAULT_TIME_LIMIT_S * 1000
  // A grading keeps about one core busy between the grader and the server it drives.
  const jobs = o.jobs ?? availableParallelism()
  const batchDir = mkdtempSync(join(tmpdir(), 'idem-roster-'))
  const workDirs = jobsToRun.map((_, i) => join(batchDir, String(i)))
  // Ctrl-C: processes.ts stops the grader children; this gets what they
  // started, and the overlays of a grader that had to be killed.
  const sweep = () => {
    workDirs.forEach((dir) => removeOverlays(overlaysOf(killMarked(join(dir, 'home')))))
    rmSync(batchDir, { recursive: true, force: true })
  }
  process.on('exit', sweep)

  const which = o.stages.length === 1 ? `at stage ${o.stages[0]!.number} · ${o.stages[0]!.title}` : `stages ${o.stages.map((s) => s.number).join(', ')}`
  console.log(
    chalk.bold(`\nGrading ${submissions.length} checkouts, ${which}`) +
      chalk.dim(`  (seed ${o.seed}, ${jobs} at a time, ${timeLimitMs / 1000} s per stage at most)`) +
      (o.sandbox ? chalk.dim(' · sandboxed') : chalk.yellow(' · NOT sandboxed (--no-sandbox)')),
  )
  const skipped = planned.length - jobsToRun.length
  if (skipped > 0)
    console.log(chalk.dim(`  ${skipped} of ${planned.length} gradings already in ${store.path} from this roster: skipped (--regrade grades them again)`))
  const started = performance.now()
  const limit = pLimit(jobs)
  const settled: Array<SubmissionResult | undefined> = await Promise.all(
    jobsToRun.map((s, i) =>
      limit(async () => {
        // Interrupted: no new grader child, and the result of one stopped mid-grade is no result.
        if (interrupted()) return undefined
        const done = await gradeSubmission({
          ...s,
          seed: o.seed,
          timeLimitMs,
          memoryMb: MEMORY_MB,
          workDir: workDirs[i]!,
          sandbox: o.sandbox,
          histories: o.histories,
        })
        if (interrupted()) return undefined
        // A grader child interrupted on its own (not by us) did not finish either: not stored, a rerun grades it.
        if (done.outcome !== 'interrupted')
          store.record({
            learner: done.learner,
            gradedAt: done.gradedAt,
            outcome: done.outcome,
            reason: done.reason,
            origin,
            result: done.result,
          })
        printLine(done)
        return done
      }),
    ),
  )
  // The signal handler (processes.ts) stops the children and exits; nothing of the batch is reported.
  if (interrupted()) throw new InterruptedError()
  const results = settled.filter((r): r is SubmissionResult => r !== undefined)
  const wallMs = Math.round(performance.now() - started)
  process.off('exit', sweep)
  rmSync(batchDir, { recursive: true, force: true })
  store.close()

  if (o.json) {
    // One entry per learner, holding one per graded stage.
    const submissionsOut = submissions.map(({ learner, checkout }) => ({
      learner,
      checkout,
      stages: results
        .filter((r) => r.learner === learner)
        .map((r) => ({ stage: r.result.stage, outcome: r.outcome, reason: r.reason, gradedAt: r.gradedAt, wallMs: r.wallMs, result: r.raw ?? r.result })),
    }))
    const payload = { stages: o.stages.map((s) => s.number), seed: o.seed, wallMs, store: store.path, submissions: submissionsOut }
    writeFileSync(o.json, `${JSON.stringify(payload, null, 2)}\n`)
  }
  const cut = results.filter((r) => r.outcome === 'interrupted').length
  const unfinished = results.filter((r) => r.outcome !== 'graded' && r.outcome !== 'interrupted').length
  console.log(
    `\n${results.length - cut} graded in ${(wallMs / 1000).toFixed(1)} s` +
      (unfinished ? chalk.yellow(` · ${unfinished} without a result of their own (0 points, reason stored)`) : '') +
      (cut ? chalk.yellow(` · ${cut} interrupted, not stored (a rerun grades them)`) : '') +
      `\nresults kept in ${store.path} · read them with ${chalk.bold('npm run scores')}`,
  )
  return 0
}

function printLine(r: SubmissionResult) {
  if (r.outcome === 'interrupted')
    return console.log(`  ${chalk.yellow('–')} ${r.learner.padEnd(20)} stage ${r.result.stage} not graded  ${chalk.dim(r.reason)}`)
  const mark =
    r.outcome === 'time limit' ? chalk.yellow('⏱') : r.outcome === 'grader failed' ? chalk.red('!') : r.result.passed ? chalk.green('✓') : chalk.red('✗')
  const seconds = chalk.dim(`${(r.wallMs / 1000).toFixed(1)} s`)
  // A grade in which nothing was graded (its server never started, or its answer was refused) says why: its 0 is no verdict on the code.
  const ungraded = r.result.gradable ? undefined : `nothing graded: ${r.result.refused?.reason ?? r.result.server.reason ?? 'the server did not start'}`
  const reason = r.reason || ungraded
  const why = reason ? chalk.dim(`  ${reason.split('\n')[0]}`) : ''
  console.log(`  ${mark} ${r.learner.padEnd(20)} stage ${r.result.stage} ${String(r.result.score).padStart(4)}/${r.result.maxScore} ${seconds}${why}`)
}
