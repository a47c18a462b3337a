// Runs a stage's checks, then every earlier stage's as regression, against real
// server processes. Generic: what to check lives in grader/checks/.
import { randomBytes } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { BankClient } from './bankClient.ts'
import { CheckFailure, type Check, type CheckContext, type StartOptions } from './check.ts'
import { checkTimeLimit, TimeoutError } from './checkTimer.ts'
import { checksFor } from './checks/index.ts'
import { deniedSolutionRead, describeRefusals, findCopiedAnswers } from './copiedAnswers.ts'
import { course, stageByNumber, type Stage } from './course.ts'
import { HttpClient, type Exchange } from './http.ts'
import { keepServer, type KeptServer } from './keep.ts'
import { sandboxExports } from './learnerCode.ts'
import { Rng } from './rng.ts'
import { stageSandbox } from './sandbox.ts'
import { SQLITE_ONLY_CHECKS } from './checks/stage6.ts'
import { databasesPerPath, startPostgres } from './postgres.ts'
import { ServerProcess, ServerStartError } from './spawnServer.ts'
import { failedToStart, notRun } from './startFailure.ts'
import { describeSource, Workspace, type Source } from './workspace.ts'

export type CheckStatus = 'pass' | 'fail' | 'timeout' | 'error'

export type CheckResult = {
  id: string
  stage: number
  title: string
  passed: boolean
  status: CheckStatus
  /** Points earned: all of the check's points when it passes, else what it awarded (ctx.award), 0 by default. */
  points: number
  maxPoints: number
  message: string
  hint: string
  notes: string[]
  durationMs: number
  /** Proof of which random inputs the check drew (same seed, same digest). */
  inputs: { draws: number; digest: string }
  failure?: { exchange?: Exchange; expected?: string; got?: string; serverLog?: string }
}

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

export type GradeOptions = {
  stage: number
  seed: number
  source?: Source
  /** Only these check ids (--only; the self-tests use it to aim at one check). */
  only?: string[]
  /** Only the graded stage's own checks, no earlier stage as regression (--no-regression). */
  noRegression?: boolean
  /** Stop after the first failing check (watch mode); the rest are not run. */
  stopAtFirstFailure?: boolean
  /** Leave the server of the first failure running (implies stopAtFirstFailure). */
  keep?: boolean
  /** Ceiling for a server that is alive but still starting (default: LAB_START_TIMEOUT_S or 60 s). */
  startTimeoutMs?: number
  /** Called with every request and response, for --verbose. */
  onExchange?: (e: Exchange) => void
  onCheckStart?: (check: Check, stage: Stage) => void
  onCheckEnd?: (result: CheckResult) => void
  /** Replace bank/main.ts (the grader's self-tests use scenario servers). */
  entry?: string
  /** Run the learner's code in a sandbox (sandbox.ts); the CLI decides with sandboxPolicy(). */
  sandbox?: boolean
  /** The sandboxes' TMPDIR, kept between a learner's own gradings (default: one per grading). */
  sandboxTmp?: string
}

export function rerunCommand(stage: number, seed: number, source: Source = { kind: 'starter' }): string {
  return `npm run grade -- ${stage} --seed ${seed}${describeSource(source)}`
}

export async function grade(options: GradeOptions): Promise<GradeResult> {
  const started = performance.now()
  const source = options.source ?? { kind: 'starter' }
  const graded = stageByNumber(options.stage)
  const workspace = new Workspace(source)
  const adminToken = `adm_${randomBytes(16).toString('hex')}`
  const defaultDb = workspace.newDbPath()
  const results: CheckResult[] = []
  let shared: ServerProcess | undefined
  let serverStartMs = 0
  /** The check that reported the failed start; the others only point at it. */
  let startFailedIn: string | undefined
  /** The requests of the first failing check: --keep lists the clients and accounts they made. */
  let failedTrace: Exchange[] | undefined
  let kept: KeptServer | undefined
  const stopEarly = options.stopAtFirstFailure || options.keep

  // A stage on PostgreSQL (6): one server for the grade, a database per database file.
  const pg = graded.database === 'postgres' ? databasesPerPath(await startPostgres()) : undefined
  if (pg && options.sandbox && !pg.server.socketDir)
    throw new Error('the sandbox has no network, so it cannot reach LAB_DATABASE_URL: grade with --no-sandbox')
  const sandbox = options.sandbox
    ? { ...stageSandbox(graded, [workspace.stageDir(graded)], [workspace.tmp, ...(pg?.server.socketDir ? [pg.server.socketDir] : [])]), tmp: options.sandboxTmp }
    : undefined
  sandboxExports(options.sandbox ? { dataDir: workspace.tmp, tmp: options.sandboxTmp } : undefined)
  const newServer = async (dbPath: string, env: Record<string, string> = {}) =>
    new ServerProcess({
      stageDir: workspace.stageDir(graded),
      dbPath,
      adminToken,
      env: { ...(await pg?.envFor(dbPath)), ...env },
      entry: options.entry,
      startTimeoutMs: options.startTimeoutMs,
      // The sandbox leaves solutions/ out altogether; without one, Node's permission model keeps it unreadable.
      ...(sandbox ? { sandbox } : { confineAsStage: graded.number }),
    })

  // Before any server starts: a folder that loads the answer scores nothing.
  const scanned = workspace.scanTarget(graded)
  let copied = describeRefusals(findCopiedAnswers(scanned))
  try {
    const order = course.stages.filter((s) => s.number <= graded.number && (!options.noRegression || s.number === graded.number)).reverse()
    grading: for (const stage of order) {
      for (const check of checksFor(stage.number)) {
        if (options.only && !options.only.includes(check.id)) continue
        if (pg && SQLITE_ONLY_CHECKS.has(check.id)) continue
        options.onCheckStart?.(check, stage)
        let result: CheckResult
        if (copied) result = refused(check, stage, copied, graded.number)
        else if (startFailedIn) result = notRun(check, stage, startFailedIn)
        else {
          // One shared server for all checks; started again if a check killed it.
          let startError: string | undefined
          if (!shared?.alive) {
            try {
              shared = await newServer(defaultDb)
              await shared.start()
              serverStartMs ||= shared.lastStartMs
            } catch (error) {
              startError = workspace.asLearnerPaths((error as Error).message)
              // A computed path into solutions/ that the permission model stopped.
              copied = deniedSolutionRead(scanned.shownAs, (error as Error).message) ?? ''
            }
          }
          if (copied) result = refused(check, stage, copied, graded.number)
          else if (startError) {
            startFailedIn = check.id
            result = failedToStart(check, stage, startError, graded.number)
          } else result = await runCheck(check, stage, shared!)
        }
        results.push(result)
        options.onCheckEnd?.(result)
        if (!result.passed && !startFailedIn && stopEarly) break grading
      }
    }
  } finally {
    if (options.keep && failedTrace && shared?.alive) {
      kept = await keepServer(shared, workspace, adminToken, failedTrace)
    } else {
      await shared?.stop()
      workspace.dispose()
      await pg?.dispose()
    }
  }

  const score = results.reduce((sum, r) => sum + r.points, 0)
  const maxScore = results.reduce((sum, r) => sum + r.maxPoints, 0)
  return {
    stage: graded.number,
    slug: graded.slug,
    seed: options.seed,
    passed: results.every((r) => r.passed),
    score,
    maxScore,
    durationMs: Math.round(performance.now() - started),
    serverStartMs,
    rerun: rerunCommand(graded.number, options.seed, source),
    checks: results,
    ...(kept ? { kept } : {}),
  }

  async function runCheck(check: Check, stage: Stage, server: ServerProcess): Promise<CheckResult> {
    const t0 = performance.now()
    const rng = new Rng(options.seed, `${stage.number}:${check.id}`)
    const notes: string[] = []
    let awarded = 0
    const trace: Exchange[] = []
    const abort = new AbortController()
    setMaxListeners(0, abort.signal) // every request of the check listens to it
    const http = new HttpClient((e) => {
      trace.push(e)
      options.onExchange?.(e)
    }, abort.signal)
    const extra: ServerProcess[] = []
    const borrowed: string[] = []
    const ctx: CheckContext = {
      seed: options.seed,
      rng,
      gradedStage: graded.number,
      bank: new BankClient(server, http, adminToken),
      dbPath: defaultDb,
      signal: abort.signal,
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
        const instance = await newServer(opts.sameDatabase ? defaultDb : workspace.newDbPath(), opts.env)
        extra.push(instance)
        await instance.start()
        return new BankClient(instance, http, adminToken)
      },
    }
    let status: CheckStatus = 'pass'
    let message = ''
    let failure: CheckResult['failure']
    const limit = checkTimeLimit(check.timeoutMs, () => [server, ...extra])
    try {
      await Promise.race([check.run(ctx), limit.expired])
    } catch (error) {
      const servers = [server, ...extra]
      // A refused or reset connection usually means a server just died: give
      // its exit event a moment to arrive, so the report can say so.
      if (!(error instanceof CheckFailure) && !(error instanceof TimeoutError))
        await Promise.race(servers.map((s) => s.exitsWithin(500)))
      const deadServer = servers.find((s) => s.unexpectedExit)
      if (error instanceof TimeoutError) {
        status = 'timeout'
        message = `timed out after ${check.timeoutMs} ms`
        failure = { exchange: [...http.pending][0] ?? trace.at(-1) }
      } else if (error instanceof CheckFailure) {
        status = 'fail'
        message = error.message
        failure = { ...error.details }
      } else if (error instanceof ServerStartError) {
        status = 'error'
        message = `an extra server instance did not start: ${error.message}`
      } else {
        // A request that failed outright (connection refused, reset, garbage).
        const e = error as Error & { exchange?: Exchange }
        status = 'fail'
        message = e.message
        failure = { exchange: e.exchange ?? trace.at(-1) }
      }
      if (deadServer) message += ` (the server ${deadServer.unexpectedExit} during this check)`
      const log = (deadServer ?? server).logTail()
      if (deadServer || status !== 'fail' || log.includes('\n')) failure = { ...failure, serverLog: log }
      failedTrace ??= trace
    } finally {
      limit.cancel()
      abort.abort()
      await Promise.all(extra.map((s) => s.stop()))
    }
    const passed = status === 'pass'
    // Which learner file a cross-stage check used, when it was not the learner's.
    notes.push(...new Set(borrowed))
    if (!passed && borrowed.length > 0) message += ` (${[...new Set(borrowed)].join('; ')})`
    return {
      id: check.id,
      stage: stage.number,
      title: check.title,
      passed,
      status,
      // A timeout or a crash earns nothing: only a verdict the check reached counts.
      points: passed ? check.points : status === 'fail' ? awarded : 0,
      maxPoints: check.points,
      message,
      hint: check.hint,
      notes,
      durationMs: Math.round(performance.now() - t0),
      inputs: rng.trace(),
      failure,
    }
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
