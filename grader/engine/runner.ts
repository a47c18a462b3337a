// Runs a stage's checks, then every earlier stage's as regression, against real
// server processes. Generic: what to check lives in grader/checks/.
import type { KeptServer } from './keep.ts'
import { NotJudged, skippedOnDatabase, type Check, type CheckNeeds } from './check.ts'
import { isFailure, type CheckResult } from './checkResult.ts'
import { makeCheckContext } from './checkContext.ts'
import { checkTimeLimit, TimeoutError } from './checkTimer.ts'
import { classifyFailure, type ClassifiedFailure } from './classifyFailure.ts'
import { checksOfGrade, type GradedCheck } from '../checks/index.ts'
import { endRun, findingsBeforeStart, prepareRun, startShared, type Findings, type GradeOptions, type Run } from './gradingRun.ts'
import { failedToStart, notRun } from './startFailure.ts'
import type { Stage } from '#harness/course.ts'
import { CheckFailure } from '#harness/failure.ts'
import { InterruptedError, interrupted } from '#harness/processes.ts'
import type { ServerProcess } from '#harness/spawnServer.ts'
import type { Exchange } from '#harness/http.ts'
import { GradeClock } from '#harness/gradeClock.ts'
import { uncontrolledClocks } from '../policing/uncontrolledClocks.ts'
import { rerunCommand } from './rerun.ts'

export type { GradeOptions } from './gradingRun.ts'

export type GradeResult = {
  stage: number
  slug: string
  seed: number
  passed: boolean
  score: number
  maxScore: number
  durationMs: number
  /** How long the first server took to start (spawn to GET /health 200): the report names a slow start. */
  serverStartMs: number
  rerun: string
  checks: CheckResult[]
  /** With `keep`: the server of the first failure, still running. */
  kept?: KeptServer
}

export async function grade(options: GradeOptions): Promise<GradeResult> {
  const started = performance.now()
  const run = await prepareRun(options)
  let found = findingsBeforeStart(run)
  const results: CheckResult[] = []
  let kept: KeptServer | undefined
  try {
    for (const { check, stage } of checkOrder(run)) {
      if (interrupted()) throw new InterruptedError()
      options.onCheckStart?.(stage, check)
      // A refused folder or a server that did not start is told by gradeCheck, like every other check.
      const healthy = !found.copied && !found.startFailedIn
      const waiting = check.afterOwnChecks && healthy && results.find((r) => r.stage === stage.number && !r.passed && r.status !== 'skipped')
      const graded = waiting ? { result: notYetJudged(check, stage, waiting.id), found } : await gradeCheck(run, found, check, stage)
      found = graded.found
      const { result } = graded
      // Interrupted, the check may have failed on a server the interrupt stopped: that is no verdict to tell.
      if (interrupted()) throw new InterruptedError()
      results.push(result)
      options.onCheckEnd?.(result)
      // A check left unjudged is not a failure: the one that fails for its cause comes, or came, on its own.
      if (isFailure(result) && !found.startFailedIn && (options.stopAtFirstFailure || options.keep)) break
    }
  } finally {
    kept = await endRun(run, found)
  }
  return {
    stage: run.graded.number,
    slug: run.graded.slug,
    seed: options.seed,
    passed: results.every((r) => r.passed),
    score: results.reduce((sum, r) => sum + r.points, 0),
    maxScore: results.reduce((sum, r) => sum + r.maxPoints, 0),
    durationMs: Math.round(performance.now() - started),
    serverStartMs: run.serverStartMs,
    rerun: rerunCommand(run.graded.number, options.seed, run.workspace.source, options.server, options),
    checks: results,
    ...(kept ? { kept } : {}),
  }
}

/** The graded stage's checks first, then every earlier stage's (unless --no-regression), filtered by --only. */
function checkOrder({ graded, options }: Run): GradedCheck[] {
  return checksOfGrade(graded, options.noRegression).filter(({ check }) => !options.only || options.only.includes(check.id))
}

/**
 * Refused, not run, failed to start, or run against the shared server
 * (started first if it is not up); with the findings as this check leaves them.
 */
async function gradeCheck(run: Run, found: Findings, check: Check, stage: Stage): Promise<{ result: CheckResult; found: Findings }> {
  const skip = skipReason(run, check)
  if (skip) return { result: skipped(check, stage, skip), found }
  if (found.copied) return { result: refused(check, stage, found.copied, run.graded.number), found }
  if (found.startFailedIn) return { result: notRun(check, stage, found.startFailedIn), found }
  const failedStart = run.shared?.alive ? undefined : await startShared(run)
  if (failedStart?.copied) return { result: refused(check, stage, failedStart.copied, run.graded.number), found: { ...found, copied: failedStart.copied } }
  if (failedStart) return { result: failedToStart(check, stage, failedStart.error, run.graded.number), found: { ...found, startFailedIn: check.id } }
  const { result, failedTrace } = await runCheck(run, check, stage, run.shared!)
  return { result, found: { ...found, failedTrace: found.failedTrace ?? failedTrace } }
}

/** A check's result, and its requests if it failed (not merely left unjudged): the first such trace is what --keep lists. */
type CheckRun = { result: CheckResult; failedTrace?: Exchange[] }

/**
 * Runs the check on the grade's clock. A timed check whose layer reads a
 * clock the grader cannot move is run again on the real clock, on a server of
 * its own, and that run decides: the grade's clock cannot judge a lease or a
 * TTL it does not drive, whether the first run failed (the clock the layer
 * reads never moved) or passed (nothing that clock decides was ever crossed).
 * A --server's code is not read: for it, only a failure (or a check left
 * unjudged, which may be the clock it reads, not its layer) is run again.
 */
async function runCheck(run: Run, check: Check, stage: Stage, server: ServerProcess): Promise<CheckRun> {
  const first = await runOnce(run, check, stage, server)
  const { result } = first
  if (!check.timed || !run.clock.controlled || result.status === 'skipped') return first
  const clocks = run.options.server
    ? result.status === 'fail' || result.status === 'not-judged'
      ? ["a clock of the --server's own"]
      : []
    : uncontrolledClocks(run.workspace.stageDir(run.graded))
  if (clocks.length === 0) return first
  const why = `the layer reads ${clocks.join(', ')}, which the grader cannot move, so the real clock decides`
  const realClock = new GradeClock(false)
  const dbPath = run.workspace.newDbPath()
  const own = await run.newServer(dbPath, {}, realClock)
  try {
    try {
      await own.start()
    } catch (error) {
      const notes = [...result.notes, `${why}, but a server on the real clock did not start to run it again: ${(error as Error).message.split('\n')[0]}`]
      return { ...first, result: { ...result, notes } }
    }
    const { result: again, failedTrace } = await runOnce(run, check, stage, own, realClock, dbPath)
    const verdict = `${verdictOf(again)} on the real clock (${verdictOf(result)} on the grader's; ${why}; the stage README says which clock to read)`
    return {
      result: { ...again, durationMs: result.durationMs + again.durationMs, notes: [verdict, ...again.notes] },
      failedTrace: first.failedTrace ?? failedTrace,
    }
  } finally {
    await own.stop()
  }
}

async function runOnce(run: Run, check: Check, stage: Stage, server: ServerProcess, clock = run.clock, dbPath = run.defaultDb): Promise<CheckRun> {
  const t0 = performance.now()
  const scope = makeCheckContext(run, check, stage, server, clock, dbPath)
  const servers = () => [server, ...scope.extra]
  let outcome: ClassifiedFailure | undefined
  const limit = checkTimeLimit(check.timeoutMs, servers)
  try {
    await Promise.race([check.run(scope.ctx), limit.expired])
  } catch (error) {
    // A refused or reset connection usually means a server just died: give
    // its exit event a moment to arrive, so the report can say so.
    if (!(error instanceof CheckFailure) && !(error instanceof TimeoutError) && !(error instanceof NotJudged))
      await Promise.race(servers().map((s) => s.exitsWithin(500)))
    outcome = classifyFailure(error, servers(), { recorded: scope.trace, unanswered: scope.http.pending })
  } finally {
    limit.cancel()
    scope.abort.abort()
    await Promise.all(scope.extra.map((s) => s.stop()))
  }
  const status = outcome?.status ?? 'pass'
  const borrowed = [...new Set(scope.borrowed)]
  // Which learner file a cross-stage check used, when it was not the learner's.
  scope.notes.push(...borrowed)
  const message = (outcome?.message ?? '') + (outcome && borrowed.length > 0 ? ` (${borrowed.join('; ')})` : '')
  const result: CheckResult = {
    id: check.id,
    stage: stage.number,
    title: check.title,
    passed: !outcome,
    status,
    // A timeout, a crash or a check left unjudged earns nothing: only a verdict the check reached counts.
    points: !outcome ? check.points : status === 'fail' ? scope.awarded() : 0,
    maxPoints: check.points,
    message,
    hint: check.hint,
    notes: scope.notes,
    durationMs: Math.round(performance.now() - t0),
    inputs: scope.ctx.rng.trace(),
    failure: outcome?.failure,
    ...(outcome?.blockedBy ? { blockedBy: outcome.blockedBy } : {}),
  }
  return { result, ...(outcome && outcome.status !== 'not-judged' ? { failedTrace: scope.trace } : {}) }
}

/** How a run of a check ended, in a word for a note. */
const verdictOf = (r: CheckResult) => (r.passed ? 'passed' : r.status === 'not-judged' ? 'not judged' : 'failed')

const NEEDS: Record<CheckNeeds, string> = {
  database: "it reads the layer's rows in the server's database (white box)",
  'sqlite-file': "it opens the server's SQLite file (white box)",
  'learner-code': "it calls the stage's TypeScript",
}

/** Why this grading's server cannot take the check, if it cannot (check.needs). */
function skipReason({ options, graded }: Run, check: Check): string | undefined {
  if (!check.needs) return undefined
  if (options.server) return `${NEEDS[check.needs]}, and a --server command offers only the HTTP contract`
  if (skippedOnDatabase(check, graded)) return `${NEEDS[check.needs]}, and stage ${graded.number} keeps its data in PostgreSQL`
  return undefined
}

/** A check this grading's server cannot take: no points, and not a failure. */
function skipped(check: Check, stage: Stage, why: string): CheckResult {
  return {
    id: check.id,
    stage: stage.number,
    title: check.title,
    passed: true,
    status: 'skipped',
    points: 0,
    maxPoints: 0,
    message: `skipped: ${why}`,
    hint: check.hint,
    notes: [],
    durationMs: 0,
    inputs: { draws: 0, digest: '' },
  }
}

/** A check that waits for the rest of its stage (check.afterOwnChecks): no points yet, and not a failure of its own. */
function notYetJudged(check: Check, stage: Stage, firstFailed: string): CheckResult {
  return {
    ...skipped(check, stage, ''),
    passed: false,
    status: 'not-judged',
    maxPoints: check.points,
    message: `not judged yet: it runs once every other check of stage ${stage.number} passes (${firstFailed} has not)`,
    blockedBy: firstFailed,
  }
}

/** A check not run because the graded folder loads the reference answer (copiedAnswers.ts). */
function refused(check: Check, stage: Stage, reason: string, gradedStage: number): CheckResult {
  return {
    ...failedToStart(check, stage, reason, gradedStage),
    status: 'fail',
    message: reason,
    hint: 'Write the stage yourself: a learner file may use bank/ and the given/ pieces of earlier stages, never solutions/.',
  }
}
