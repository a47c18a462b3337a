// What `npm run scores` reports, computed once from the stored runs and then
// rendered as text, CSV or HTML: learners ranked by points, points per stage,
// every check's result per learner, and pass rates per check and per stage.
// Stage k's column is the latest run that graded the learner's stage-k folder,
// counting stage k's own checks: the earlier layers a stage folder receives
// solved (given/) earn nothing there. Its regression checks only mark the cell.
// A learner of the class with no run at all (a roster the batch never reached,
// or a name from --roster) is a row that says "not graded": it counts in no
// pass rate and no average.
import { course } from '#harness/course.ts'
import { isRegression } from '#grader/engine/gradeResult.ts'
import type { Outcome, StoredCheck, StoredRun } from '../roster/store.ts'

export type CheckColumn = { id: string; stage: number; title: string; maxPoints: number }

export type StagePoints = {
  stage: number
  points: number
  maxPoints: number
  /** Every one of the stage's own checks passes. */
  passedAll: boolean
  /** Checks of earlier stages that fail on this stage's folder. */
  regressionFailed: number
  /** The run that graded this stage's folder. */
  run: StoredRun
}

export type LearnerRow = {
  learner: string
  stages: StagePoints[]
  /** The worst way one of its runs ended (a time limit shows even when the other stages graded); 'not graded': no run at all. */
  outcome: Outcome | 'not graded'
  /** The learner's result for each column of `Summary.checks` (undefined: not graded in this run). */
  checks: Array<StoredCheck | undefined>
  total: number
  maxTotal: number
}

export type CheckStat = CheckColumn & {
  graded: number
  passed: number
  rate: number
  /** The most frequent first line of the failure messages. */
  commonReason: string
}

export type StageStat = { stage: number; title: string; graded: number; passedAll: number; rate: number }

export type Summary = {
  checks: CheckColumn[]
  stages: number[]
  /** Best first; ties by learner id. */
  learners: LearnerRow[]
  /** How many of `learners` have no run (listed last, by name). */
  notGraded: number
  checkStats: CheckStat[]
  stageStats: StageStat[]
}

/**
 * `runs`: each learner's latest run of each stage (ResultsStore.latestRuns).
 * `classList`: the class's learners (ResultsStore.rosterLearners, or a roster
 * folder's): one with no run among `runs` gets a "not graded" row.
 */
export function summarize(runs: StoredRun[], classList: readonly string[] = []): Summary {
  const own = (run: StoredRun) => run.checks.filter((c) => !isRegression(c, run.stage))
  const checks = orderedChecks(runs.map((run) => ({ ...run, checks: own(run) })))
  const stages = [...new Set(runs.map((r) => r.stage))].sort((a, b) => a - b)
  const byLearner = new Map<string, StoredRun[]>()
  for (const run of runs) byLearner.set(run.learner, [...(byLearner.get(run.learner) ?? []), run])
  const learners = [...byLearner]
    .map(([learner, theirs]): LearnerRow => {
      const byId = new Map(theirs.flatMap((run) => own(run).map((c) => [key(c), c] as const)))
      const stagePoints = stages.flatMap((stage): StagePoints[] => {
        const run = theirs.find((r) => r.stage === stage)
        if (!run) return []
        const mine = own(run)
        return [
          {
            stage,
            // The run's score, as its grade result said it (stageScore).
            points: run.score,
            maxPoints: run.maxScore,
            passedAll: mine.some(passed) && mine.every((c) => passed(c) || skipped(c)),
            regressionFailed: run.checks.filter((c) => isRegression(c, stage) && !passed(c) && !skipped(c) && !notJudged(c)).length,
            run,
          },
        ]
      })
      const outcome = (['grader failed', 'time limit'] as const).find((o) => theirs.some((r) => r.outcome === o)) ?? 'graded'
      return {
        learner,
        stages: stagePoints,
        outcome,
        checks: checks.map((c) => byId.get(key(c))),
        total: sum(stagePoints.map((p) => p.points)),
        maxTotal: sum(stagePoints.map((p) => p.maxPoints)),
      }
    })
    .sort((a, b) => b.total - a.total || byName(a, b))
  const ungraded = [...new Set(classList)]
    .filter((learner) => !byLearner.has(learner))
    .map((learner): LearnerRow => ({ learner, stages: [], outcome: 'not graded', checks: checks.map(() => undefined), total: 0, maxTotal: 0 }))
    .sort(byName)
  learners.push(...ungraded)

  const checkStats = checks.map((column, i): CheckStat => {
    // A skipped check (a --server grade that cannot take it) was not graded, nor was one left
    // unjudged by another check's failure (that one counts as failing): neither counts either way.
    const results = learners.flatMap((l) => (l.checks[i] && !skipped(l.checks[i]) && !notJudged(l.checks[i]) ? [l.checks[i]!] : []))
    const passes = results.filter(passed).length
    return {
      ...column,
      graded: results.length,
      passed: passes,
      rate: results.length ? passes / results.length : 0,
      commonReason: mostCommon(results.filter((r) => !passed(r)).map((r) => r.message.split('\n')[0]!)),
    }
  })
  const stageStats = stages.map((stage): StageStat => {
    const rows = learners.flatMap((l) => l.stages.filter((s) => s.stage === stage))
    const passedAll = rows.filter((s) => s.passedAll).length
    const title = course.stages.find((s) => s.number === stage)?.title ?? `stage ${stage}`
    return { stage, title, graded: rows.length, passedAll, rate: rows.length ? passedAll / rows.length : 0 }
  })
  return { checks, stages, learners, notGraded: ungraded.length, checkStats, stageStats }
}

const byName = (a: LearnerRow, b: LearnerRow) => (a.learner < b.learner ? -1 : a.learner > b.learner ? 1 : 0)

const passed = (c: StoredCheck) => c.status === 'pass'
/** Skipped by a --server grade (the check needs the SQLite file or the stage's TypeScript): neither pass nor failure. */
const skipped = (c: StoredCheck) => c.status === 'skipped'
/** Left unjudged: another check fails for its precondition (it earns nothing, and is not a failure of its own). */
const notJudged = (c: StoredCheck) => c.status === 'not-judged'

/** A learner's stages that are not clean passes (own checks, regression, or the run itself), with their reruns. */
export function notPassed(row: LearnerRow): StagePoints[] {
  return row.stages.filter((p) => !p.passedAll || p.regressionFailed > 0 || p.run.outcome !== 'graded')
}

/** The checks the class fails most: lowest pass rate first, those everyone passes left out. */
export function mostFailed(summary: Summary, count = 5): CheckStat[] {
  return summary.checkStats
    .filter((c) => c.graded > 0 && c.passed < c.graded)
    .sort((a, b) => a.rate - b.rate || a.stage - b.stage)
    .slice(0, count)
}

/**
 * Course order: stage by stage, checks as course.json lists them. Checks the
 * manifest does not list (results of another course version) follow, in the
 * order the grader ran them.
 */
function orderedChecks(runs: Array<Pick<StoredRun, 'checks'>>): CheckColumn[] {
  const seen = new Map<string, CheckColumn>()
  for (const run of runs)
    for (const c of run.checks) if (!seen.has(key(c))) seen.set(key(c), { id: c.id, stage: c.stage, title: c.title, maxPoints: c.maxPoints })
  const firstSeen = [...seen.keys()]
  const position = (c: CheckColumn) => {
    const i = course.stages.find((s) => s.number === c.stage)?.checks.indexOf(c.id) ?? -1
    return i < 0 ? 1_000 + firstSeen.indexOf(key(c)) : i
  }
  return [...seen.values()].sort((a, b) => a.stage - b.stage || position(a) - position(b))
}

const key = (c: { stage: number; id: string }) => `${c.stage}:${c.id}`
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

function mostCommon(lines: string[]): string {
  const counts = new Map<string, number>()
  for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1)
  let best = ''
  let bestCount = 0
  for (const [line, n] of counts) if (n > bestCount) [best, bestCount] = [line, n]
  return best
}
