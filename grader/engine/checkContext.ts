// What one check is given (its CheckContext: a bank client, a seeded random
// stream, a way to start more servers) and what it leaves behind for its
// result: its requests, notes, partial credit, the extra servers to stop.
import { setMaxListeners } from 'node:events'
import { BankClient } from '#harness/bankClient.ts'
import { stageByNumber, type Stage } from '#harness/course.ts'
import { CheckFailure } from '#harness/failure.ts'
import { HttpClient, type Exchange } from '#harness/http.ts'
import { Rng } from '#harness/rng.ts'
import type { ServerProcess } from '#harness/spawnServer.ts'
import type { Check, CheckContext, StartOptions } from './check.ts'
import { describeRefusals, findCopiedAnswers } from '../policing/copiedAnswers.ts'
import type { Run } from './gradingRun.ts'
import { HISTORIES_DEFAULT } from '../model/historyCount.ts'
import { rerunCommand } from './rerun.ts'

/** What a check is given, and what it leaves behind for its result. */
export type CheckScope = {
  ctx: CheckContext
  http: HttpClient
  /** Aborted when the check ends: whatever it still has in flight stops. */
  abort: AbortController
  trace: Exchange[]
  notes: string[]
  /** Extra instances the check started: stopped when it ends. */
  extra: ServerProcess[]
  /** Notes on learner files this course's starter stood in for. */
  borrowed: string[]
  awarded(): number
}

/**
 * The context of one run of `check` against `server`. By default on the
 * grade's timeline and its shared server; a run again on the real clock
 * (runner.ts) passes a real clock, and a server of its own on `defaultDb`.
 */
export function makeCheckContext(run: Run, check: Check, stage: Stage, server: ServerProcess, clock = run.clock, defaultDb = run.defaultDb): CheckScope {
  const { options, workspace, adminToken } = run
  const notes: string[] = []
  const trace: Exchange[] = []
  const extra: ServerProcess[] = []
  const borrowed: string[] = []
  let awarded = 0
  const abort = new AbortController()
  setMaxListeners(0, abort.signal) // every request of the check listens to it
  const http = new HttpClient((e) => {
    trace.push(e)
    options.onExchange?.(e)
  }, abort.signal)
  const ctx: CheckContext = {
    seed: options.seed,
    rng: new Rng(options.seed, `${stage.number}:${check.id}`),
    gradedStage: run.graded.number,
    bank: new BankClient(server, http, adminToken),
    dbPath: defaultDb,
    signal: abort.signal,
    clock,
    histories: options.histories ?? HISTORIES_DEFAULT,
    rerun: rerunCommand(run.graded.number, options.seed, workspace.source, options.server, { only: [check.id], histories: options.histories }),
    note: (line) => notes.push(line),
    award: (points) => (awarded = Math.max(0, Math.min(check.points, Math.floor(points)))),
    stageDir: (n) => {
      const stage = stageByNumber(n)
      const copiedThere = describeRefusals(findCopiedAnswers(workspace.scanTarget(stage)))
      if (copiedThere) throw new CheckFailure(copiedThere)
      borrowed.push(...workspace.borrowed(stage))
      return workspace.stageDir(stage)
    },
    async startServer(opts: StartOptions = {}) {
      const instance = await run.newServer(opts.sameDatabase ? defaultDb : workspace.newDbPath(), opts.env, clock)
      extra.push(instance)
      await instance.start()
      return new BankClient(instance, http, adminToken)
    },
  }
  return { ctx, http, abort, trace, notes, extra, borrowed, awarded: () => awarded }
}
