// The histories check of a stage: random sequences of operations (history.ts)
// run against the learner's server, every answer and the ledger after every
// step judged by the model of what stages 0–N promise (model/contract.ts).
//
// The hand-written checks each send the few paths someone thought of; this
// one sends combinations nobody named: a request held in the core while the
// clock crosses its lease, a replay after a crash that lost the first answer,
// another client's key on the other route. A failure is shrunk by fast-check
// to the shortest history that still fails, and shown step by step.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import fc from 'fast-check'
import { repoRoot } from '#harness/paths.ts'
import { fail, type Check, type CheckContext } from '../engine/check.ts'
import { historyArbitrary, motifKinds, type Alphabet, type History, type MotifKind } from '../model/history.ts'
import { runHistory, type HistoryEnv, type HistoryRun, type Instance } from '../model/runHistory.ts'
import { timelineHtml, timelineText } from '../model/timeline.ts'
import { uncontrolledClocks } from '../policing/uncontrolledClocks.ts'
import { DEFAULT_KEY_TTL_MS, DEFAULT_LEASE_MS } from './setup.ts'

/** Longest history generated: long enough for hold, a retry, a clock move, a crash, a release and a replay. */
const MAX_STEPS = 14
/**
 * Shrinking stops after this many runs past the first failure, or this long:
 * the verdict is already known, only its picture gets shorter (a history
 * with a crash costs a restart per try).
 */
const SHRINK_RUNS = 150
const SHRINK_MS = 20_000
/** Restarts the histories of one grade may cost before a failure is found (then shrinking may restart freely, within SHRINK_MS). */
const RESTARTS = 3
/** Stage 6's other two instances stand 30 s behind and ahead of the timeline. */
const SKEWS_MS = [0, -30_000, 30_000]

export function historiesCheck(stage: number): Check {
  return {
    id: `histories-${stage}`,
    title: `Random histories of requests, held cores, crashes and clock moves, judged against the model of stages 0–${stage}`,
    points: stage === 6 ? 10 : 8,
    hint: 'The history printed above is the shortest one that fails. Replay it step by step with the curl lines; the first ✗ step is where your layer first answered what the contract does not allow.',
    // Stage 6's histories restart servers on PostgreSQL and took up to 97 s at load average 21 on 2 cores.
    timeoutMs: stage === 6 ? 240_000 : 120_000,
    regression: false,
    afterOwnChecks: true,
    async run(ctx) {
      const instances = await instancesFor(ctx, stage)
      const faultPoint = await offersFaultPoint(instances[0]!)
      const layerClocks = readsUncontrolledClock(ctx)
      const alphabet: Alphabet = { instances: instances.length, clock: ctx.clock.controlled && !layerClocks, ttl: stage >= 5, faultPoint }
      if (!alphabet.clock)
        ctx.note(`no clock moves in these histories: ${layerClocks ? 'the layer reads a clock the grader cannot move' : 'the clock is the real one'}`)
      if (!faultPoint) ctx.note('no crash after the commit: the server does not offer that fault point (PUT /admin/core {"crashAfterCommit": true})')
      const env: HistoryEnv = {
        stage,
        instances,
        clock: ctx.clock,
        periods: { leaseMs: DEFAULT_LEASE_MS, ttlMs: DEFAULT_KEY_TTL_MS },
        faultPoint,
        answerTimeoutMs: 10_000,
        restarts: { left: RESTARTS },
      }
      const failed = await findShortestFailure(ctx, env, alphabet)
      if (!failed) {
        ctx.note(
          `${ctx.histories} histories of up to ${MAX_STEPS} steps matched the model (one around each of ${Math.min(motifKinds(alphabet).length, ctx.histories)} motifs, the rest random)`,
        )
        return
      }
      const { run, runs, shrinks } = failed
      const shown = {
        run,
        stage,
        seed: ctx.seed,
        instances: instances.map((i) => i.label),
        rerun: ctx.rerun,
      }
      const page = writePage(stage, ctx.seed, timelineHtml(shown))
      const lines = timelineText(shown)
      fail(
        `a history of ${run.steps.length} step(s) (history ${runs} of ${ctx.histories}, shrunk ${shrinks} time(s)) ended where the contract does not allow:\n${lines.join('\n')}\nthe history as a sequence diagram, with every request as curl: ${page}`,
        { exchange: run.mismatch!.exchange, expected: run.mismatch!.expected, got: run.mismatch!.got },
      )
    },
  }
}

/** Stage 6: three instances on one database, two of them skewed; before: the shared server alone. */
async function instancesFor(ctx: CheckContext, stage: number): Promise<Instance[]> {
  if (stage < 6) return [{ bank: ctx.bank, label: 'bank' }]
  const instances: Instance[] = [{ bank: ctx.bank, label: 'instance 1' }]
  for (const skew of SKEWS_MS.slice(1))
    instances.push({
      bank: await ctx.startServer({ sameDatabase: true, settings: { clockOffsetMs: skew } }),
      label: `instance ${instances.length + 1} (clock ${skew > 0 ? '+' : '−'}${Math.abs(skew) / 1000} s)`,
    })
  return instances
}

/** The bank's fault point after the commit: a --server built on an older bank may not have it. */
async function offersFaultPoint(instance: Instance): Promise<boolean> {
  try {
    await instance.bank.core({ crashAfterCommit: false })
    return true
  } catch {
    return false
  }
}

function readsUncontrolledClock(ctx: CheckContext): boolean {
  try {
    return uncontrolledClocks(ctx.stageDir(ctx.gradedStage)).length > 0
  } catch {
    return false
  }
}

type Failure = { run: HistoryRun; runs: number; shrinks: number }

/**
 * Runs `ctx.histories` histories seeded by the grade's seed: first one built
 * around each motif (a held request and its duplicate, a crash, a clock move
 * across a boundary, ...), so that no seed leaves a motif out, then random
 * ones. On the first that fails, fast-check shrinks it, and the shortest
 * failing run seen is returned.
 */
async function findShortestFailure(ctx: CheckContext, env: HistoryEnv, alphabet: Alphabet): Promise<Failure | undefined> {
  const search: Search = { env, runs: 0, firstFailure: 0, afterFailure: 0, shrinkUntil: Number.POSITIVE_INFINITY }
  const tour = motifKinds(alphabet).slice(0, ctx.histories)
  const rounds: Array<{ only?: MotifKind; numRuns: number }> = [...tour.map((only) => ({ only, numRuns: 1 })), { numRuns: ctx.histories - tour.length }]
  for (const { only, numRuns } of rounds) {
    if (numRuns <= 0) continue
    const property = fc.asyncProperty(historyArbitrary(alphabet, MAX_STEPS, only), (history: History) => tryHistory(search, ctx.seed, history))
    const details = await fc.check(property, { seed: ctx.rng.int(0, 2 ** 31 - 1), numRuns, endOnFailure: !ctx.shrink, unbiased: true })
    if (search.broken !== undefined && !search.shortest) throw search.broken
    if (!details.failed) continue
    // The property only returns false after recording a run, so a failure without one is fast-check's own error.
    if (!search.shortest) throw details.errorInstance
    return { run: search.shortest, runs: search.firstFailure, shrinks: details.numShrinks }
  }
  return undefined
}

/** What the runs of one grade's histories have found so far. */
type Search = {
  env: HistoryEnv
  runs: number
  firstFailure: number
  afterFailure: number
  shrinkUntil: number
  shortest?: HistoryRun
  /** An error that is not a mismatch (the server stopped answering the admin routes, say): it ends the search and is the check's result, never shrunk. */
  broken?: unknown
}

/** fast-check's property: runs one history, true when the model allows every answer in it (or the search is over). */
async function tryHistory(search: Search, seed: number, history: History): Promise<boolean> {
  const { env } = search
  if (search.broken !== undefined || (search.shortest && (++search.afterFailure > SHRINK_RUNS || performance.now() > search.shrinkUntil))) return true
  search.runs++
  let run: HistoryRun
  try {
    run = await runHistory({ ...env, answerTimeoutMs: search.shortest ? 3_000 : env.answerTimeoutMs }, history, seed * 1_000 + search.runs)
  } catch (error) {
    search.broken = error
    return true
  }
  if (!run.mismatch) return true
  if (!search.shortest) {
    search.firstFailure = search.runs
    search.shrinkUntil = performance.now() + SHRINK_MS
    env.restarts.left = Number.POSITIVE_INFINITY
  }
  if (!search.shortest || run.steps.length <= search.shortest.steps.length) search.shortest = run
  return false
}

/** The sequence diagram, written where the learner can open it; returns its path relative to the working folder. */
function writePage(stage: number, seed: number, html: string): string {
  const dir = join(repoRoot, '.lab', 'histories')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `stage-${stage}-seed-${seed}.html`)
  writeFileSync(path, html)
  return relative(process.cwd(), path) || path
}
