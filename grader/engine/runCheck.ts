// Runs one check: within its time limit, with a watch on its servers'
// health, and, where the layer reads a clock the grader cannot move, again on
// the real clock. Returns its result; the grade (grading.ts) decides what
// comes next.
import { type Line, listOf, phrases } from '#harness/i18n/phrase.ts'
import { setTimeout as sleep } from 'node:timers/promises'
import { resetCore } from '#harness/adminRoutes.ts'
import type { Exchange } from '#harness/http.ts'
import type { GradeClock } from '#harness/gradeClock.ts'
import type { ServerProcess } from '#harness/spawnServer.ts'
import type { Stage } from '#harness/course.ts'
import { CheckFailure } from '#harness/failure.ts'
import { NotJudged, type Check } from './check.ts'
import type { CheckResult } from './checkResult.ts'
import { makeCheckContext, type CheckGround } from './checkContext.ts'
import { checkTimeLimit, TimeoutError } from './checkTimer.ts'
import { classifyFailure, type ClassifiedFailure } from './classifyFailure.ts'
import { reasonSaid } from './startFailure.ts'
import { answersMoney, HUNG_AFTER_MS, ServerHungError, watchHealth } from './watchdog.ts'

/** A check's result; its requests if it failed (not merely left unjudged): the first such trace is what --keep lists; and whether its server stopped answering. */
export type CheckRun = { result: CheckResult; failedTrace?: Exchange[]; hung?: boolean }

/** What running a check needs of its grade, besides what its context does. */
export type CheckRunGround = CheckGround & {
  readonly clock: GradeClock
  /** The real clock, for checks run again on it: one per grade, so its instances are reused. */
  readonly realClock: GradeClock
  readonly sharedDb: string
  /** The clocks the graded layer reads that the grader cannot move (none: the grade's clock decides). */
  uncontrolledClocks(): Line[]
}

const say = phrases('runCheck', {
  moneySilent: 'its money routes answer nothing: the check ran out of time, and a deposit sent after it got no answer either',
  realClockNotStarted: '{why}, but a server on the real clock did not start to run it again: {error}',
  realClockVerdict: "{verdict} on the real clock ({first} on the grader's; {why}; the stage README says which clock to read)",
  serverCodeNotRead: "a --server's code is not read, and it may read a clock of its own, which the grader cannot move: the real clock decides",
  layerReadsClock: 'the layer reads {clocks}, which the grader cannot move, so the real clock decides',
  withBorrowed: '{message} ({borrowed})',
  passed: 'passed',
  notJudged: 'not judged',
  failed: 'failed',
})

/**
 * Runs the check on the grade's clock against `shared`. A timed check whose
 * layer reads a clock the grader cannot move is run again on the real clock,
 * on an instance of its own, and that run decides: the grade's clock cannot
 * judge a lease or a TTL it does not drive, whether the first run failed (the
 * clock the layer reads never moved) or passed (nothing that clock decides
 * was ever crossed). A --server's code is not read: for it, only a failure
 * (or a check left unjudged, which may be the clock it reads, not its layer)
 * is run again.
 */
export async function runCheck(ground: CheckRunGround, check: Check, stage: Stage, shared: ServerProcess): Promise<CheckRun> {
  const first = await runOnce(ground, check, stage, shared, ground.clock, ground.sharedDb)
  const { result } = first
  if (!check.timed || !ground.clock.controlled || result.status === 'skipped' || first.hung) return first
  const why = whyTheRealClock(ground, result.status)
  if (!why) return first
  let own: ServerProcess
  try {
    own = await ground.pool.lend({ settings: {}, database: 'fresh', clock: ground.realClock })
  } catch (error) {
    const notes = [...result.notes, say('realClockNotStarted', { why, error: reasonSaid((error as Error).message.split('\n')[0]!)[0]! })]
    return { ...first, result: { ...result, notes } }
  }
  try {
    const again = await runOnce(ground, check, stage, own, ground.realClock, own.options.dbPath)
    const verdict = say('realClockVerdict', { verdict: verdictOf(again.result), first: verdictOf(result), why })
    return {
      result: { ...again.result, durationMs: result.durationMs + again.result.durationMs, notes: [verdict, ...again.result.notes] },
      failedTrace: first.failedTrace ?? again.failedTrace,
      hung: again.hung,
    }
  } finally {
    await ground.pool.giveBack([own])
  }
}

/**
 * Why a timed check is run again on the real clock, or undefined when it is
 * not: the layer reads a clock the grader cannot move (found in its code), or
 * a --server's check failed or went unjudged, and its code, not read, may read
 * a clock of its own.
 */
function whyTheRealClock(ground: CheckRunGround, status: CheckResult['status']): Line | undefined {
  if (ground.options.server) return status === 'fail' || status === 'not-judged' ? say('serverCodeNotRead') : undefined
  const clocks = ground.uncontrolledClocks()
  return clocks.length ? say('layerReadsClock', { clocks: listOf(clocks, 'comma') }) : undefined
}
async function runOnce(ground: CheckRunGround, check: Check, stage: Stage, bank: ServerProcess, clock: GradeClock, defaultDb: string): Promise<CheckRun> {
  const t0 = performance.now()
  const scope = makeCheckContext(ground, check, stage, bank, clock, defaultDb)
  const servers = () => [bank, ...scope.lent]
  let outcome: ClassifiedFailure | undefined
  const limit = checkTimeLimit(check.timeoutMs, scope.startingMs)
  const watch = watchHealth(servers)
  try {
    await Promise.race([check.run(scope.ctx), limit.expired, watch.hung])
  } catch (caught) {
    let error = caught
    // A refused or reset connection usually means a server just died: give
    // its exit event a moment to arrive, so the report can say so.
    if (!(error instanceof CheckFailure) && !(error instanceof TimeoutError) && !(error instanceof NotJudged) && !(error instanceof ServerHungError))
      await Promise.race(servers().map((s) => s.exitsWithin(500)))
    // Out of time with its health answering: does it still answer a money request at all?
    if (error instanceof TimeoutError) error = (await silentServer(servers())) ?? error
    outcome = classifyFailure(error, servers(), { recorded: scope.trace, unanswered: scope.http.pending })
  } finally {
    limit.cancel()
    watch.stop()
    scope.abort.abort()
    await ground.pool.giveBack(scope.lent)
  }
  const status = outcome?.status ?? 'pass'
  const borrowed = [...new Map(scope.borrowed.map((line) => [String(line), line])).values()]
  // Which learner file a cross-stage check used, when it was not the learner's.
  scope.notes.push(...borrowed)
  const message = !outcome
    ? ''
    : borrowed.length > 0
      ? say('withBorrowed', { message: outcome.message, borrowed: listOf(borrowed, 'semicolon') })
      : outcome.message
  const result: CheckResult = {
    id: check.id,
    stage: stage.number,
    title: check.title,
    passed: !outcome,
    status,
    // A timeout, a crash, a hang or a check left unjudged earns nothing: only a verdict the check reached counts.
    points: !outcome ? check.points : status === 'fail' && !outcome.hung ? scope.awarded() : 0,
    maxPoints: check.points,
    message,
    hint: check.hint,
    notes: scope.notes,
    durationMs: Math.round(performance.now() - t0),
    inputs: scope.ctx.rng.trace(),
    failure: outcome?.failure,
    ...(outcome?.blockedBy ? { blockedBy: outcome.blockedBy } : {}),
    ...(scope.coverage() ? { coverage: scope.coverage() } : {}),
  }
  return { result, ...(outcome && outcome.status !== 'not-judged' ? { failedTrace: scope.trace } : {}), ...(outcome?.hung ? { hung: true } : {}) }
}

/**
 * The first of `servers` that no longer answers a money request, as the hang
 * it is. Its core is let go first: a check that timed out may have left it
 * holding calls, and a deposit held there is no silence of the server's.
 */
async function silentServer(servers: ServerProcess[]): Promise<ServerHungError | undefined> {
  for (const server of servers.filter((s) => s.alive && !s.isStarting)) {
    const probe = async () => {
      await resetCore(server, { timeoutMs: HUNG_AFTER_MS }).catch(() => undefined) // a --server may have no core to let go
      return answersMoney(server)
    }
    // HUNG_AFTER_MS in all: the silence is measured once, whatever the probe needed on the way.
    if (!(await Promise.race([probe(), sleep(HUNG_AFTER_MS).then(() => false)]))) return new ServerHungError(say('moneySilent'), server)
  }
  return undefined
}

/** How a run of a check ended, in a word for a note. */
const verdictOf = (r: CheckResult) => say(r.passed ? 'passed' : r.status === 'not-judged' ? 'notJudged' : 'failed')
