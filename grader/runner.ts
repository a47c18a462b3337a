// Runs a stage's checks, then every earlier stage's as regression, against real
// server processes. Generic: what to check lives in grader/checks/.
import { randomBytes } from 'node:crypto'
import { setMaxListeners } from 'node:events'
import { BankClient } from './bankClient.ts'
import { CheckFailure, type Check, type CheckContext, type StartOptions } from './check.ts'
import { checksFor } from './checks/index.ts'
import { course, stageByNumber, type Stage } from './course.ts'
import { HttpClient, type Exchange } from './http.ts'
import { Rng } from './rng.ts'
import { ServerProcess, ServerStartError } from './spawnServer.ts'
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
  rerun: string
  checks: CheckResult[]
}

export type GradeOptions = {
  stage: number
  seed: number
  source?: Source
  /** Only these check ids (the self-tests use it to aim at one check). */
  only?: string[]
  /** Called with every request and response, for --verbose. */
  onExchange?: (e: Exchange) => void
  onCheckStart?: (check: Check, stage: Stage) => void
  onCheckEnd?: (result: CheckResult) => void
  /** Replace bank/main.ts (the grader's self-tests use scenario servers). */
  entry?: string
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
  let startError: string | undefined

  const newServer = (dbPath: string, env: Record<string, string> = {}) =>
    new ServerProcess({ stageDir: workspace.stageDir(graded), dbPath, adminToken, env, entry: options.entry })

  try {
    const order = course.stages.filter((s) => s.number <= graded.number).reverse()
    for (const stage of order) {
      for (const check of checksFor(stage.number)) {
        if (options.only && !options.only.includes(check.id)) continue
        options.onCheckStart?.(check, stage)
        // One shared server for all checks; started again if a check killed it.
        if (!startError && !shared?.alive) {
          shared = newServer(defaultDb)
          try {
            await shared.start()
          } catch (error) {
            startError = (error as Error).message
          }
        }
        const result = startError
          ? failedToStart(check, stage, startError)
          : await runCheck(check, stage, shared!)
        results.push(result)
        options.onCheckEnd?.(result)
      }
    }
  } finally {
    await shared?.stop()
    workspace.dispose()
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
    rerun: rerunCommand(graded.number, options.seed, source),
    checks: results,
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
    const ctx: CheckContext = {
      seed: options.seed,
      rng,
      gradedStage: graded.number,
      bank: new BankClient(server, http, adminToken),
      dbPath: defaultDb,
      signal: abort.signal,
      note: (line) => notes.push(line),
      award: (points) => (awarded = Math.max(0, Math.min(check.points, Math.floor(points)))),
      stageDir: (n) => workspace.stageDir(stageByNumber(n)),
      async startServer(opts: StartOptions = {}) {
        const instance = newServer(opts.sameDatabase ? defaultDb : workspace.newDbPath(), opts.env)
        extra.push(instance)
        await instance.start()
        return new BankClient(instance, http, adminToken)
      },
    }
    let status: CheckStatus = 'pass'
    let message = ''
    let failure: CheckResult['failure']
    let timer: NodeJS.Timeout | undefined
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError()), check.timeoutMs)
      })
      await Promise.race([check.run(ctx), timeout])
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
    } finally {
      clearTimeout(timer)
      abort.abort()
      await Promise.all(extra.map((s) => s.stop()))
    }
    const passed = status === 'pass'
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

class TimeoutError extends Error {}

function failedToStart(check: Check, stage: Stage, reason: string): CheckResult {
  return {
    id: check.id,
    stage: stage.number,
    title: check.title,
    passed: false,
    status: 'error',
    points: 0,
    maxPoints: check.points,
    message: `the server did not start: ${reason}`,
    hint: 'Start it yourself with `npm run serve -- <stage>` and read what it prints.',
    notes: [],
    durationMs: 0,
    inputs: { draws: 0, digest: '' },
  }
}
