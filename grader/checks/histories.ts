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
import { dirname, join, relative } from 'node:path'
import fc from 'fast-check'
import { type Line, listOf, phrases } from '#harness/i18n/phrase.ts'
import { repoRoot } from '#harness/paths.ts'
import { fail, type Check, type CheckContext } from '../engine/check.ts'
import { courseRuleLabel } from '../engine/courseRule.ts'
import { historyArbitrary, tourOf, type Alphabet, type History, type TourStop } from '../model/history.ts'
import { runHistory, type HistoryEnv, type HistoryRun, type Instance } from '../model/runHistory.ts'
import { instanceLabel, labelAtPeriods, timelineHtml, timelineScript, timelineScriptName, timelineText } from '../model/timeline.ts'
import { uncontrolledClocks } from '../policing/uncontrolledClocks.ts'
import type { CoreSettings } from '#harness/bankClient.ts'
import { layerRows } from './layerRows.ts'
import { promisesOf, type Periods } from '../model/contract.ts'
import { transitionSaid, transitionsOf, type Reach } from '../model/coverage.ts'
import type { Coverage } from '../engine/checkResult.ts'
import { SETTINGS_ROUNDS, HISTORIES_PER_SETTINGS_ROUND } from '../model/historyCount.ts'
import { drawnPeriods, type DrawnPeriods } from '../model/settings.ts'
import { DEFAULT_KEY_TTL_MS, DEFAULT_LEASE_MS } from './setup.ts'

// What a histories check tells a learner: its reach, or the history that broke the contract (its steps are evidence).
const say = phrases('histories', {
  noClockMoves: 'no clock moves in these histories: {why}',
  layerClock: 'the layer reads a clock the grader cannot move',
  realClock: 'the clock is the real one',
  noCrashAfterCommit: 'no crash after the commit: the server does not offer that fault point (PUT /admin/core {"crashAfterCommit": true})',
  noHoldAlone: 'no request held alone: the server does not offer it (PUT /admin/core {"holdNext": 1})',
  reached: 'reached {reached} of the {total} transitions of the model these histories can reach (npm run grade -- {stage} --coverage lists them)',
  reachedMissed:
    'reached {reached} of the {total} transitions of the model these histories can reach; not reached: {missed} (npm run grade -- {stage} --coverage lists them)',
  matched:
    '{count} histories of up to {longest} steps matched the model ({tour} around the {motifs} motifs, their first request executing or refused, the rest random{settings}){again}',
  settings: '; {count} at other settings: {list}',
  again: ', and the tour once more for the transitions it missed ({count})',
  brokeContract: 'a history of {steps} step(s) (history {run} of {total}, shrunk {shrinks} time(s)) ended where the contract does not allow:',
  missedRule: 'every history kept the contract, but history {run} of {total} missed a course rule at step {step}:',
  alsoMissed: 'it also missed a course rule: ({label}) {got}',
  diagram: 'the history as a sequence diagram: {page}',
  replay: 'replay it on a server of your own: {script} (the page says how)',
})

/** Longest random history asked of fast-check (its default size draws at most 12; a motif with its random steps around it can be longer). */
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
/** Real time a purge on a timer gets to delete expired rows in a history, as purge-bounded gives it (runHistory.ts). */
const PURGE_WAIT_MS = 10_000
/** Stage 6's other two instances stand 30 s behind and ahead of the timeline. */
const SKEWS_MS = [0, -30_000, 30_000]

export function historiesCheck(stage: number): Check {
  return {
    id: `histories-${stage}`,
    title: `Random histories of requests, held cores, crashes and clock moves, judged against the model of stages 0–${stage}`,
    points: stage === 6 ? 10 : 8,
    hint: 'The history printed above is the shortest one that fails (a course rule missed: up to where it was missed). Replay it on your own server with the script beside its page; the ✗ step is where your layer first answered what the contract does not allow.',
    // Stage 6's histories restart servers on PostgreSQL and took up to 97 s at load average 21 on 2 cores.
    timeoutMs: stage === 6 ? 240_000 : 120_000,
    regression: false,
    async run(ctx) {
      const instances = await instancesFor(ctx, stage)
      const faultPoint = await offers(instances[0]!, { crashAfterCommit: false })
      const holdAlone = await offers(instances[0]!, { holdNext: 0 })
      const layerClocks = readsUncontrolledClock(ctx)
      const alphabet: Alphabet = { instances: instances.length, clock: ctx.clock.controlled && !layerClocks, ttl: stage >= 5, faultPoint, holdAlone }
      if (!alphabet.clock) ctx.note(say('noClockMoves', { why: layerClocks ? say('layerClock') : say('realClock') }))
      if (!faultPoint) ctx.note(say('noCrashAfterCommit'))
      if (!holdAlone) ctx.note(say('noHoldAlone'))
      const keyTable = stage >= 5 ? await readableKeyTable(instances[0]!) : undefined
      const env: HistoryEnv = {
        stage,
        instances,
        clock: ctx.clock,
        periods: { leaseMs: DEFAULT_LEASE_MS, ttlMs: DEFAULT_KEY_TTL_MS },
        faultPoint,
        holdAlone,
        ...(keyTable ? { keyTable } : {}),
        answerTimeoutMs: 10_000,
        restarts: { left: RESTARTS },
        purgeWait: { ms: PURGE_WAIT_MS },
      }
      const tour = tourOf(alphabet).slice(0, ctx.histories)
      // Some histories run at drawn settings, on instances of their own: only on a clock the grader moves (a lease under a second on the real clock is a race).
      const drawn = alphabet.clock ? drawnPeriods(ctx.rng, SETTINGS_ROUNDS[stage >= 6 ? 'postgres' : 'sqlite'], stage >= 5, DEFAULT_KEY_TTL_MS) : []
      const perRound = Math.min(HISTORIES_PER_SETTINGS_ROUND, Math.floor((ctx.histories - tour.length) / (drawn.length + 1)))
      const atDefaults = async () => env
      const tourRounds = tour.map((stop): Round => ({ env: atDefaults, alphabet, stop, numRuns: 1 }))
      const rounds: Round[] = [
        ...tourRounds,
        { env: atDefaults, alphabet, numRuns: ctx.histories - tour.length - perRound * drawn.length },
        ...drawn.flatMap((periods): Round[] => {
          const made = once(() => envAt(ctx, stage, env, periods))
          // Where the claim outlives its key, the tour's purge while a claim is held meets a live claim: it runs there first.
          const purgeStop = tour.find((t) => t.motif === 'purge-while-held')
          return [
            ...(purgeStop && periods.ttlMs < periods.leaseMs ? [{ env: made, alphabet, stop: purgeStop, numRuns: 1 }] : []),
            { env: made, alphabet, numRuns: perRound },
          ]
        }),
      ]
      const searched = newSearch()
      let search = await findShortestFailure(ctx, rounds, searched)
      const reach = { clock: alphabet.clock, holdAlone, keyTable: !!keyTable }
      const missedIn = (coverage: Coverage) => coverage.filter((c) => !c.unreachable && c.histories === 0)
      let coverage = coverageOf(stage, reach, search.reached)
      // A seed whose draws left a reachable transition out (a tour's body change that the bank refused, say) runs the
      // tour once more on fresh draws: every grade is meant to reach them all, whatever its seed.
      const retour = !search.failure && missedIn(coverage).length > 0
      if (retour) {
        search = await findShortestFailure(ctx, tourRounds, searched)
        coverage = coverageOf(stage, reach, search.reached)
      }
      ctx.reportCoverage(coverage)
      const missed = missedIn(coverage)
      if (!search.failure)
        ctx.note(
          say(missed.length ? 'reachedMissed' : 'reached', {
            reached: coverage.filter((c) => !c.unreachable).length - missed.length,
            total: coverage.filter((c) => !c.unreachable).length,
            missed: listOf(
              missed.map((c) => transitionSaid(c.transition)),
              'semicolon',
            ),
            stage: ctx.gradedStage,
          }),
        )
      const failed = search.failure ?? search.convention
      if (!failed) {
        const settings = drawn.length && perRound ? say('settings', { count: perRound * drawn.length, list: drawn.map(describePeriods).join('; ') }) : ''
        const again = retour ? say('again', { count: tour.length }) : ''
        ctx.note(
          say('matched', {
            count: ctx.histories,
            longest: search.longest,
            tour: tour.length,
            motifs: new Set(tour.map((t) => t.motif)).size,
            settings,
            again,
          }),
        )
        return
      }
      const { run, runs, shrinks } = failed
      // Shown against the contract when it was broken; else the course rule the histories missed, under its label.
      const verdict = search.failure ? run.mismatch! : run.convention!
      // A course rule's history is not shrunk (the contract held throughout): it is shown up to the step that missed the rule.
      const steps = search.failure ? run.steps : run.steps.slice(0, verdict.step)
      const shown = { run: { steps, parties: run.parties, mismatch: verdict }, stage, seed: ctx.seed, instances: failed.labels, rerun: ctx.rerun }
      const page = writePage(stage, ctx.seed, timelineHtml(shown))
      const script = writeBeside(page, timelineScriptName(shown), timelineScript(shown))
      const lines = timelineText(shown)
      const what = search.failure
        ? say('brokeContract', { steps: run.steps.length, run: runs, total: ctx.histories, shrinks })
        : say('missedRule', { run: runs, total: ctx.histories, step: verdict.step })
      const missedToo = search.failure && search.convention?.run.convention
      const also = missedToo ? [say('alsoMissed', { label: courseRuleLabel(missedToo.rule!), got: missedToo.got })] : []
      fail(listOf([what, ...lines, ...also, say('diagram', { page }), say('replay', { script })], 'lines'), {
        exchange: verdict.exchange,
        expected: verdict.expected,
        got: verdict.got,
      })
    },
  }
}

/** Stage 6: three instances on one database, two of them skewed; before: the shared server alone. */
async function instancesFor(ctx: CheckContext, stage: number): Promise<Instance[]> {
  const instances: Instance[] = [{ bank: ctx.bank, label: instanceLabel(stage, 1, 0) }]
  if (stage >= 6)
    for (const skew of SKEWS_MS.slice(1))
      instances.push({
        bank: await ctx.startServer({ sameDatabase: true, settings: { clockOffsetMs: skew } }),
        label: instanceLabel(stage, instances.length + 1, skew),
      })
  return instances
}

/** The histories' environment at drawn settings: instances of their own, on a fresh database (stage 6: three on one, skewed as the default ones). */
async function envAt(ctx: CheckContext, stage: number, defaults: HistoryEnv, periods: DrawnPeriods): Promise<HistoryEnv> {
  const settings = { leaseMs: periods.leaseMs, keyTtlMs: periods.ttlMs }
  const at = (instance: Line) => labelAtPeriods(instance, describePeriods(periods))
  const first = await ctx.startServer({ settings })
  const instances: Instance[] = [{ bank: first, label: at(instanceLabel(stage, 1, 0)) }]
  if (stage >= 6)
    for (const skew of SKEWS_MS.slice(1))
      instances.push({
        bank: await ctx.startServer({ databaseOf: first, settings: { ...settings, clockOffsetMs: skew } }),
        label: at(instanceLabel(stage, instances.length + 1, skew)),
      })
  const keyTable = defaults.keyTable ? await readableKeyTable(instances[0]!) : undefined
  const { keyTable: _, ...rest } = defaults
  return { ...rest, instances, periods, ...(keyTable ? { keyTable } : {}) }
}

const describePeriods = (p: Periods) => `LAB_LEASE_MS=${p.leaseMs}, LAB_KEY_TTL_MS=${p.ttlMs}`

/** Whether the core takes a setting (the fault point after the commit, a call held alone): a --server built on an older bank may not. */
async function offers(instance: Instance, setting: CoreSettings): Promise<boolean> {
  try {
    await instance.bank.core(setting)
    return true
  } catch {
    return false
  }
}

/** The layer's rows holding a text, when this grade can read the database (not a --server's). */
async function readableKeyTable(instance: Instance): Promise<HistoryEnv['keyTable']> {
  const bank = instance.bank
  try {
    await layerRows(bank)
  } catch {
    return undefined
  }
  return (text) => layerRows(bank, text)
}

function readsUncontrolledClock(ctx: CheckContext): boolean {
  try {
    return uncontrolledClocks(ctx.stageDir(ctx.gradedStage)).length > 0
  } catch {
    return false
  }
}

/** A failing run, with the labels of the instances it ran on (their settings, when not the defaults). */
type Failure = { run: HistoryRun; runs: number; shrinks: number; labels: Line[] }

/** `make`, called once however often the result is asked for: two rounds on the same instances. */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined
  return () => (made ??= make())
}

/** Histories of one kind: around one motif (the tour) or random, on an environment made when the round is reached. */
type Round = { env: () => Promise<HistoryEnv>; alphabet: Alphabet; stop?: TourStop; numRuns: number }

/** What a grade's histories found: the shortest run that broke the contract, the first that only missed a course rule, and how many histories took each transition. */
type Found = { failure?: Failure; convention?: Failure; reached: Map<string, number>; longest: number }

/** Every transition of the stage's model, with the histories that took it, and any taken that the model's list lacks (a gap in coverage.ts, shown as such). */
function coverageOf(stage: number, reach: Reach, reached: Map<string, number>): Coverage {
  const known = transitionsOf(promisesOf(stage), reach)
  const names = new Set(known.map((t) => t.name))
  return [
    ...known.map((t) => ({ transition: t.name, histories: reached.get(t.name) ?? 0, ...(t.unreachable ? { unreachable: t.unreachable } : {}) })),
    ...[...reached]
      .filter(([name]) => !names.has(name))
      .map(([transition, histories]) => ({ transition: `${transition} (not in the model's list)`, histories })),
  ]
}

/**
 * Runs `ctx.histories` histories seeded by the grade's seed: first one built
 * around each motif (a held request and its duplicate, a crash, a clock move
 * across a boundary, ...), so that no seed leaves a motif out, then random
 * ones. On the first that fails, fast-check shrinks it, and the shortest
 * failing run seen is returned.
 */
async function findShortestFailure(ctx: CheckContext, rounds: Round[], search: Search): Promise<Found> {
  for (const { env: made, alphabet, stop, numRuns } of rounds) {
    if (numRuns <= 0) continue
    // Drawn before the environment is made, so that each round's histories are the same whatever an earlier one cost.
    const seed = ctx.rng.int(0, 2 ** 31 - 1)
    const env = await made()
    const labels = env.instances.map((i) => i.label)
    const property = fc.asyncProperty(historyArbitrary(alphabet, MAX_STEPS, stop), (history: History) => tryHistory(search, env, labels, ctx.seed, history))
    const details = await fc.check(property, { seed, numRuns, endOnFailure: !ctx.shrink, unbiased: true })
    if (search.broken !== undefined && !search.shortest) throw search.broken
    if (!details.failed) continue
    // The property only returns false after recording a run, so a failure without one is fast-check's own error.
    if (!search.shortest) throw details.errorInstance
    return { failure: { run: search.shortest, runs: search.firstFailure, shrinks: details.numShrinks, labels }, ...search }
  }
  return search
}

const newSearch = (): Search => ({ runs: 0, firstFailure: 0, afterFailure: 0, shrinkUntil: Number.POSITIVE_INFINITY, reached: new Map(), longest: 0 })

/** What the runs of one grade's histories have found so far (one search may go on over several calls of findShortestFailure). */
type Search = {
  runs: number
  /** Histories per transition, counted before the first failure (shrinking replays the same ones). */
  reached: Map<string, number>
  /** The most steps a history run had (its motif's, and any the end of a history adds). */
  longest: number
  firstFailure: number
  afterFailure: number
  shrinkUntil: number
  shortest?: HistoryRun
  /** The shortest failing history's intents and operations up to its failing step (failingPrefixOf). */
  failingPrefix?: { steps: number; text: string }
  /** The first run that kept the contract but missed a course rule. */
  convention?: Failure
  /** An error that is not a mismatch (the server stopped answering the admin routes, say): it ends the search and is the check's result, never shrunk. */
  broken?: unknown
}

/** fast-check's property: runs one history, true when the model allows every answer in it (or the search is over). */
async function tryHistory(search: Search, env: HistoryEnv, labels: Line[], seed: number, history: History): Promise<boolean> {
  if (search.broken !== undefined || (search.shortest && (++search.afterFailure > SHRINK_RUNS || performance.now() > search.shrinkUntil))) return true
  // Steps after the one that failed never ran: a try that only drops some of them fails as the shortest did, without a run
  // (a layer that hangs would otherwise spend the shrinking's time on them, not on the steps that matter).
  const prefix = search.failingPrefix
  if (prefix && failingPrefixOf(history, prefix.steps) === prefix.text) return false
  search.runs++
  let run: HistoryRun
  try {
    run = await runHistory({ ...env, answerTimeoutMs: search.shortest ? 3_000 : env.answerTimeoutMs }, history, seed * 1_000 + search.runs)
  } catch (error) {
    search.broken = error
    return true
  }
  if (!search.shortest) for (const t of run.transitions ?? []) search.reached.set(t, (search.reached.get(t) ?? 0) + 1)
  search.longest = Math.max(search.longest, run.steps.length)
  if (run.convention && !search.convention) search.convention = { run, runs: search.runs, shrinks: 0, labels }
  if (!run.mismatch) return true
  if (!search.shortest) {
    search.firstFailure = search.runs
    search.shrinkUntil = performance.now() + SHRINK_MS
    env.restarts.left = Number.POSITIVE_INFINITY
  }
  if (!search.shortest || run.steps.length <= search.shortest.steps.length) {
    search.shortest = run
    search.failingPrefix = { steps: run.mismatch.step, text: failingPrefixOf(history, run.mismatch.step) }
  }
  return false
}

/** A history's intents and first `steps` operations, as one comparable text. */
const failingPrefixOf = (history: History, steps: number) => JSON.stringify([history.intents, history.ops.slice(0, steps)])

/** The sequence diagram, written where the learner can open it; returns its path relative to the working folder. */
function writePage(stage: number, seed: number, html: string): string {
  const dir = join(repoRoot, '.lab', 'histories')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `stage-${stage}-seed-${seed}.html`)
  writeFileSync(path, html)
  return relative(process.cwd(), path) || path
}

/** A file next to the page (its replay script); returns its path as the page's is given. */
function writeBeside(page: string, name: string, text: string): string {
  const path = join(dirname(page), name)
  writeFileSync(path, text)
  return path
}
