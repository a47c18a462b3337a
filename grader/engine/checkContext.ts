// What one check is given (its CheckContext: a bank client, a seeded random
// stream, more instances from the grade's pool) and what it leaves behind for
// its result: its requests, notes, partial credit, the instances it was lent.
import { setMaxListeners } from 'node:events'
import { BankClient } from '#harness/bankClient.ts'
import { stageByNumber, type Stage } from '#harness/course.ts'
import { CheckFailure } from '#harness/failure.ts'
import type { GradeClock } from '#harness/gradeClock.ts'
import { HttpClient, type Exchange } from '#harness/http.ts'
import { Rng } from '#harness/rng.ts'
import type { ServerProcess } from '#harness/spawnServer.ts'
import type { ScanTarget, Source } from '#harness/workspace.ts'
import type { Check, CheckContext, StartOptions } from './check.ts'
import type { Coverage } from './checkResult.ts'
import { describeRefusals, findCopiedAnswers } from '../policing/copiedAnswers.ts'
import type { InstancePool } from './instancePool.ts'
import type { LearnerExports } from '../policing/learnerCode.ts'
import { historiesDefault } from '../model/historyCount.ts'
import { rerunCommand } from './rerun.ts'
import type { ServerCommand } from '#harness/serverCommand.ts'
import type { Line } from '#harness/i18n/phrase.ts'

/** What a check's context is made from: the grade it runs in (grading.ts). */
export type CheckGround = {
  readonly options: { seed: number; histories?: number; shrink?: boolean; server?: ServerCommand; onExchange?: (e: Exchange) => void }
  readonly graded: Stage
  readonly adminToken: string
  readonly pool: InstancePool
  readonly exports: LearnerExports
  readonly workspace: {
    readonly source: Source
    stageDir(stage: Stage): string
    scanTarget(stage: Stage): ScanTarget
    borrowed(stage: Stage): Line[]
  }
}

/** What a check is given, and what it leaves behind for its result. */
export type CheckScope = {
  ctx: CheckContext
  http: HttpClient
  /** Aborted when the check ends: whatever it still has in flight stops. */
  abort: AbortController
  trace: Exchange[]
  notes: Line[]
  /** The instances the check was lent (besides its default one): given back when it ends. */
  lent: ServerProcess[]
  /** Notes on learner files this course's starter stood in for. */
  borrowed: Line[]
  awarded(): number
  coverage(): Coverage | undefined
  /** Time spent getting instances and starting servers since the check began: a check's time limit leaves it out. */
  startingMs(now: number): number
}

/**
 * The context of one run of `check` against `bank`, its default instance on
 * `defaultDb`, on `clock`: by default the grade's timeline and shared server; a
 * run again on the real clock (runCheck.ts) passes a real clock and an
 * instance of its own.
 */
export function makeCheckContext(ground: CheckGround, check: Check, stage: Stage, bank: ServerProcess, clock: GradeClock, defaultDb: string): CheckScope {
  const { options, workspace, adminToken, pool } = ground
  const notes: Line[] = []
  const trace: Exchange[] = []
  const lent: ServerProcess[] = []
  const borrowed: Line[] = []
  let awarded = 0
  let coverage: Coverage | undefined
  const abort = new AbortController()
  setMaxListeners(0, abort.signal) // every request of the check listens to it
  const http = new HttpClient((e) => {
    trace.push(e)
    options.onExchange?.(e)
  }, abort.signal)
  // Starting time already spent by each server before the check had it, and time spent in startServer.
  const before = new Map<ServerProcess, number>([[bank, bank.startingMs()]])
  let lending = 0
  const ctx: CheckContext = {
    seed: options.seed,
    rng: new Rng(options.seed, `${stage.number}:${check.id}`),
    gradedStage: ground.graded.number,
    bank: new BankClient(bank, http, adminToken),
    dbPath: defaultDb,
    signal: abort.signal,
    clock,
    histories: options.histories ?? historiesDefault(stage),
    shrink: options.shrink ?? true,
    rerun: rerunCommand(ground.graded.number, options.seed, workspace.source, options.server, { only: [check.id], histories: options.histories }),
    note: (line) => notes.push(line),
    award: (points) => (awarded = Math.max(0, Math.min(check.points, Math.floor(points)))),
    reportCoverage: (table) => (coverage = table),
    stageDir: (n) => {
      const stage = stageByNumber(n)
      const copiedThere = describeRefusals(findCopiedAnswers(workspace.scanTarget(stage)))
      if (copiedThere) throw new CheckFailure(copiedThere)
      borrowed.push(...workspace.borrowed(stage))
      return workspace.stageDir(stage)
    },
    callExport: (file, request, timeoutMs) => ground.exports.call(file, request, timeoutMs),
    async startServer(opts: StartOptions = {}) {
      const since = performance.now()
      try {
        const database = opts.databaseOf ? opts.databaseOf.server.options.dbPath : opts.sameDatabase ? defaultDb : 'fresh'
        const instance = await pool.lend({ settings: opts.settings ?? {}, database, clock })
        lent.push(instance)
        before.set(instance, instance.startingMs())
        return new BankClient(instance, http, adminToken)
      } finally {
        lending += performance.now() - since
      }
    },
  }
  return {
    ctx,
    http,
    abort,
    trace,
    notes,
    lent,
    borrowed,
    awarded: () => awarded,
    coverage: () => coverage,
    startingMs: (now) => lending + [...before].reduce((sum, [server, ms]) => sum + server.startingMs(now) - ms, 0),
  }
}
