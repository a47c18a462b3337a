// One grade, from start to end, owned here:
//   prepare: its workspace, admin token and clock, its PostgreSQL (stage 6),
//     the pool of its bank processes (instancePool.ts);
//   start:   the bundle of the bank and the graded code (serverBuild.ts),
//     built once, and the shared instance every check talks to;
//   loop:    each check in turn, judged (runCheck.ts) or given the result of a
//     check not run (unrunResults.ts), with what the grade has found so far;
//   end:     every process stopped and every folder removed, or with --keep
//     the first failure's server left running.
// The checks come from the caller (grader/grade.ts): the engine knows no course.
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { newGraderToken } from '#bank/auth.ts'
import { basename } from 'node:path'
import { type Settings, settingsEnv } from '#bank/config.ts'
import { clockIsControlled } from '#harness/adminRoutes.ts'
import { BundleError, holdBundler } from '#harness/bundle.mjs'
import { stageByNumber, type Stage } from '#harness/course.ts'
import { GradeClock } from '#harness/gradeClock.ts'
import type { Exchange } from '#harness/http.ts'
import { databasesPerPath, startPostgres, type GradeDatabases, type PgServer } from '#harness/postgres.ts'
import { type Isolation, isolationOf } from '#harness/isolation.ts'
import { InterruptedError, interrupted } from '#harness/processes.ts'
import { stageSandbox, type SandboxSpec } from '#harness/sandbox.ts'
import { buildServer } from '#harness/serverBuild.ts'
import type { ServerCommand } from '#harness/serverCommand.ts'
import { ServerProcess, type ServerOptions, ServerStartError } from '#harness/spawnServer.ts'
import { Workspace, type ScanTarget, type Source } from '#harness/workspace.ts'
import { deniedSolutionRead, describeRefusals, findCopiedAnswers } from '../policing/copiedAnswers.ts'
import { LearnerExports } from '../policing/learnerCode.ts'
import { uncontrolledClocks } from '../policing/uncontrolledClocks.ts'
import { skippedOnDatabase, type Check, type GradedCheck } from './check.ts'
import { inEnglish, isFailure, type CheckResult } from './checkResult.ts'
import { type GradeResult, isRegression, RESULT_SCHEMA, stageScore } from './gradeResult.ts'
import { InstancePool } from './instancePool.ts'
import { keepServer, type KeptServer } from './keep.ts'
import { rerunCommand } from './rerun.ts'
import { runCheck } from './runCheck.ts'
import { afterHang, failedToStart, notRun, refused, skipped } from './unrunResults.ts'

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
  onCheckStart?: (stage: Stage, check: Check) => void
  onCheckEnd?: (result: CheckResult) => void
  /** Called as a stage on PostgreSQL starts a server of its own (an embedded one takes seconds); what it returns is called once it is up, or with undefined if it did not start. */
  onDatabaseStart?: (stage: Stage) => (server: PgServer | undefined) => void
  /** Replace bank/main.ts (the grader's self-tests use scenario servers, run under tsx). */
  entry?: string
  /** Run the learner's code in a sandbox (sandbox.ts); the CLI decides with sandboxPolicy(). */
  sandbox?: boolean
  /** The sandboxes' TMPDIR, kept between a learner's own gradings (default: one per grading). */
  sandboxTmp?: string
  /** Grade this command's server (`--server CMD`, any language) instead of a stage folder. */
  server?: ServerCommand
  /**
   * A running PostgreSQL that several grades share (the repetitions, the
   * self-tests): a stage-6 grade makes and drops its own databases on it and
   * leaves it running, instead of starting a server of its own.
   */
  postgres?: PgServer
  /** Run every check on the host's clock, waiting out leases and TTLs (--real-clock), as for a server whose clock cannot be moved. */
  realClock?: boolean
  /** How many random histories each histories check runs (--histories; default: historiesDefault of its stage). */
  histories?: number
  /** false: a failing histories check shows the first failing history as found, unshrunk (the repetitions: verdicts only). */
  shrink?: boolean
}

/** What the grade has found out about the graded code so far: each check is judged in its light. */
type Findings = {
  /** Why the graded folder scores nothing (it loads the answer), or ''. */
  copied: Line
  /** The check that reported the failed start; the others only point at it. */
  startFailedIn?: string
  /** The first line of why the server did not start, for a grade whose server never did. */
  startError?: string
  /** The check during which the server stopped answering; nothing after it is judged. */
  hungIn?: string
  /** The requests of the first failing check: --keep lists the clients and accounts they made. */
  failedTrace?: Exchange[]
}

/** Grades `options.stage` with `checks`, in order: the one way a grade runs. */
export async function runGrading(options: GradeOptions, checks: GradedCheck[]): Promise<GradeResult> {
  const started = performance.now()
  const grading = await Grading.prepare(options)
  const results: CheckResult[] = []
  let kept: KeptServer | undefined
  try {
    for (const { check, stage } of checks) {
      if (interrupted()) throw new InterruptedError()
      options.onCheckStart?.(stage, check)
      const result = await grading.judge(check, stage)
      // Interrupted, the check may have failed on a server the interrupt stopped: that is no verdict to tell.
      if (interrupted()) throw new InterruptedError()
      results.push(result)
      options.onCheckEnd?.(result)
      if (isFailure(result) && grading.goesOnAfterFailure() === false) break
    }
  } finally {
    kept = await grading.end()
  }
  const graded = grading.graded.number
  const server = grading.serverState()
  const refused = grading.refusal()
  return {
    schema: RESULT_SCHEMA,
    stage: graded,
    slug: grading.graded.slug,
    seed: options.seed,
    gradable: server.started && !refused,
    server,
    refused,
    passed: results.every((r) => r.passed),
    ...stageScore(graded, results),
    isolation: grading.isolation,
    durationMs: Math.round(performance.now() - started),
    serverStartMs: grading.serverStartMs,
    serverStarts: grading.pool.starts,
    rerun: rerunCommand(graded, options.seed, grading.workspace.source, options.server, options),
    checks: results.map((r) => ({ ...inEnglish(r), regression: isRegression(r, graded) })),
    ...(kept ? { kept } : {}),
  }
}

export class Grading {
  readonly adminToken: string
  readonly realClock: GradeClock
  /** The bundler's service, kept for the grade's builds and let go at its end. */
  private readonly releaseBundler: () => Promise<void>
  /** The bank and the graded code, bundled once for every server of the grade (none for a scenario entry or a --server). */
  private bundle: Promise<string> | undefined
  private shared: ServerProcess | undefined
  private found: Findings
  private clocksRead: Line[] | undefined
  serverStartMs = 0
  /** The shared instance answered GET /health at least once. */
  private serverStarted = false
  readonly pool: InstancePool
  readonly sharedDb: string
  readonly scanned: ScanTarget
  readonly exports: LearnerExports

  private constructor(
    readonly options: GradeOptions,
    readonly graded: Stage,
    readonly workspace: Workspace,
    readonly clock: GradeClock,
    private readonly pg: GradeDatabases | undefined,
    /** How far the learner's code is kept from the grader (isolation.ts): decided once, in prepare(). */
    readonly isolation: Isolation,
  ) {
    // The grader's own token (bank/auth.ts): what lets the grade's banks have a clock the grade moves.
    this.adminToken = newGraderToken()
    this.realClock = new GradeClock(false)
    this.releaseBundler = holdBundler()
    this.sharedDb = workspace.newDbPath()
    this.scanned = workspace.scanTarget(graded)
    // A --server command loads none of our code: there is no answer to copy.
    this.found = { copied: options.server ? '' : describeRefusals(findCopiedAnswers(this.scanned)) }
    this.exports = new LearnerExports(
      workspace.buildDir,
      options.sandbox ? { dataDir: workspace.tmp, tmp: options.sandboxTmp } : undefined,
      isolation === 'user',
    )
    this.pool = new InstancePool(
      {
        sharedDb: this.sharedDb,
        newDbPath: () => workspace.newDbPath(),
        databaseEnv: async (dbPath, clock) => (pg ? await pg.envFor(dbPath, clock) : {}),
        databaseName: async (dbPath, clock) => (pg ? new URL((await pg.envFor(dbPath, clock)).LAB_DATABASE_URL!).pathname.slice(1) : basename(dbPath)),
        server: (dbPath, settings, clock, warm) => this.newServer(dbPath, settings, clock, warm),
      },
      wholeGrade(options),
    )
  }

  static async prepare(options: GradeOptions): Promise<Grading> {
    const graded = stageByNumber(options.stage)
    const pg =
      graded.database !== 'postgres'
        ? undefined
        : options.postgres
          ? databasesPerPath(options.postgres, { shared: true, ahead: wholeGrade(options) })
          : databasesPerPath(await startDatabase(options, graded), { ahead: wholeGrade(options) })
    if (pg && options.sandbox && !pg.server.socketDir) {
      await pg.dispose()
      throw new Error('the sandbox has no network, so it cannot reach LAB_DATABASE_URL: grade with --no-sandbox')
    }
    // The bank always offers PUT /admin/clock; the self-tests' scenario servers (entry) never do, and a --server is asked once it runs.
    const clock = new GradeClock(!options.realClock && !options.entry)
    const isolation = isolationOf(!!options.sandbox)
    return new Grading(options, graded, new Workspace(options.source ?? { kind: 'starter' }, isolation === 'user'), clock, pg, isolation)
  }

  /** After a failure: watch mode and --keep stop at the first one, unless it was a start failure or a hang (the rest is already told). */
  goesOnAfterFailure(): boolean {
    return !(this.options.stopAtFirstFailure || this.options.keep) || !!this.found.startFailedIn || !!this.found.hungIn
  }

  /** Whether the grade's server started, and if it never did, why. */
  serverState(): GradeResult['server'] {
    if (this.serverStarted) return { started: true, reason: null }
    const { found } = this
    const reason = found.startError ?? (found.copied ? 'not started: the graded folder was refused' : 'not started: no check that ran needed it')
    return { started: false, reason }
  }

  /** The graded folder loads the reference answer: why, or null. */
  refusal(): GradeResult['refused'] {
    return this.found.copied ? { reason: String(this.found.copied) } : null
  }

  /** The clocks the graded layer reads that the grader cannot move (read once per grade). */
  uncontrolledClocks(): Line[] {
    this.clocksRead ??= uncontrolledClocks(this.workspace.stageDir(this.graded))
    return this.clocksRead
  }

  /** The check's result: one of a check not run, or its run against the shared instance (started first if it is not up). */
  async judge(check: Check, stage: Stage): Promise<CheckResult> {
    const skip = this.skipReason(check)
    if (skip) return skipped(check, stage, skip)
    const { found } = this
    if (found.copied) return refused(check, stage, found.copied)
    if (found.startFailedIn) return notRun(check, stage, found.startFailedIn)
    if (found.hungIn) return afterHang(check, stage, found.hungIn)
    const failedStart = this.shared?.alive ? undefined : await this.startShared()
    if (failedStart?.copied) {
      found.copied = failedStart.copied
      return refused(check, stage, failedStart.copied)
    }
    if (failedStart) {
      const result = failedToStart(check, stage, failedStart.error, this.graded.number, failedStart.limit)
      found.startFailedIn = check.id
      found.startError = String(result.message).split('\n')[0]
      return result
    }
    const run = await runCheck(this, check, stage, this.shared!)
    found.failedTrace ??= run.failedTrace
    if (run.hung) found.hungIn = check.id
    // Whatever the check left held or armed in the shared core is let go; a server that no longer answers is the next check's to find.
    else await this.pool.tidyShared(this.shared!).catch(() => undefined)
    return this.inLearnerPaths(run.result)
  }

  /** A result whose message and server log name the files of the graded checkout, not of its overlay (a --dir grade). */
  private inLearnerPaths(result: CheckResult): CheckResult {
    const paths = (text: string) => this.workspace.asLearnerPaths(text)
    const { failure } = result
    return {
      ...result,
      message: typeof result.message === 'string' ? paths(result.message) : result.message.mapEvidence(paths),
      ...(failure?.serverLog ? { failure: { ...failure, serverLog: paths(failure.serverLog) } } : {}),
    }
  }

  /** Stops every process and removes the folders, or with --keep leaves the first failure's server running. */
  async end(): Promise<KeptServer | undefined> {
    const { shared, found } = this
    await this.releaseBundler()
    if (this.options.keep && found.failedTrace && shared?.alive) {
      await this.pool.stopAll(shared)
      return keepServer(shared, this.workspace, this.adminToken, found.failedTrace)
    }
    await this.pool.stopAll()
    this.workspace.dispose()
    await this.pg?.dispose()
    return undefined
  }

  /** Why this grade's server cannot take the check, if it cannot (check.needs). */
  private skipReason(check: Check): Line | undefined {
    if (!check.needs) return undefined
    if (this.options.server) return say('serverOnlyHttp', { needs: NEEDS[check.needs] })
    if (skippedOnDatabase(check, this.graded)) return say('onPostgres', { needs: NEEDS[check.needs], stage: this.graded.number })
    return undefined
  }

  /**
   * Starts the shared instance (again, if it died). If it did not start,
   * returns why, and the copied answer its failure revealed: a computed path
   * into solutions/ that the sandbox or the permission model stopped ('' when
   * the failure is not that).
   */
  private async startShared(): Promise<{ error: string; copied: Line; limit?: Line } | undefined> {
    try {
      const first = !this.shared
      this.shared ??= await this.pool.shared(this.clock)
      await this.shared.start()
      this.serverStartMs ||= this.shared.lastStartMs
      this.serverStarted = true
      // Every whole grade of a stage with keys restarts its server (the histories check crashes it) and
      // starts another on its database (two-instances-one-database): a spare gets going while the first checks run.
      if (first && this.graded.number >= 1 && wholeGrade(this.options)) await this.pool.warmUp(this.shared)
      // A --server may not offer PUT /admin/clock: then the grade waits on real time.
      if (this.options.server && this.clock.controlled && !(await clockIsControlled(this.shared))) this.clock.useRealTime()
      return undefined
    } catch (error) {
      const message = this.workspace.asLearnerPaths((error as Error).message)
      return {
        error: message,
        copied: error instanceof BundleError ? '' : (deniedSolutionRead(this.scanned.shownAs, message) ?? ''),
        ...(error instanceof ServerStartError && error.limit ? { limit: error.limit } : {}),
      }
    }
  }

  /** A server process of the grade (not started), on `dbPath` with `settings`. */
  private async newServer(dbPath: string, settings: Partial<Settings>, clock: GradeClock, warm?: ServerOptions['warm']): Promise<ServerProcess> {
    const { options, workspace, adminToken } = this
    const env = { ...(await this.pg?.envFor(dbPath, clock)), ...settingsEnv(settings) }
    // The self-tests' scenario servers (entry) are the grader's own code: never run as nobody.
    const asUser = this.isolation === 'user' && !options.entry
    const common = { clock, dbPath, adminToken, env, startTimeoutMs: options.startTimeoutMs, stageDir: workspace.stageDir(this.graded), warm, asUser }
    if (options.server)
      return new ServerProcess({
        ...common,
        command: options.server,
        sandbox: options.sandbox ? { readOnly: [], writable: [workspace.tmp], tmp: options.sandboxTmp } : undefined,
      })
    const bundle = options.entry ? undefined : await this.built()
    return new ServerProcess({
      ...common,
      entry: options.entry,
      bundle,
      // The sandbox leaves solutions/ out altogether; without one, Node's permission model keeps it unreadable.
      ...(options.sandbox ? { sandbox: this.sandboxSpec() } : { confineAsStage: this.graded.number }),
    })
  }

  /** The bundle every server of the grade runs, built on first use; a compile error is the server's failure to start. */
  private built(): Promise<string> {
    this.bundle ??= buildServer({ stage: this.graded.number, stageDir: this.workspace.stageDir(this.graded), outDir: this.workspace.buildDir })
    return this.bundle
  }

  private sandboxSpec(): SandboxSpec {
    const { workspace, graded, pg, options } = this
    // The embedded PostgreSQL's socket folder is the one way out of the sandbox that a stage-6 bank has.
    const writable = [workspace.tmp, ...(pg?.server.socketDir ? [pg.server.socketDir] : [])]
    return { ...stageSandbox(graded, [workspace.stageDir(graded), workspace.buildDir], writable), tmp: options.sandboxTmp }
  }
}

/** A grade of every check of its stage (earlier stages' or not), of the course's bank: the one that keeps a spare process. */
const wholeGrade = (options: GradeOptions) => !options.only && !options.server && !options.entry

/** The grade's own PostgreSQL, told to onDatabaseStart: the CLI shows a line while it starts. */
async function startDatabase(options: GradeOptions, graded: Stage): Promise<PgServer> {
  const started = options.onDatabaseStart?.(graded)
  let server: PgServer | undefined
  try {
    server = await startPostgres()
    return server
  } finally {
    started?.(server)
  }
}

// Why a check is skipped, as templates the packs translate (i18n/<lang>.json, "messages": grading.<key>).
const say = phrases('grading', {
  database: "it reads the layer's rows in the server's database (white box)",
  sqliteFile: "it opens the server's SQLite file (white box)",
  learnerCode: "it calls the stage's TypeScript",
  serverOnlyHttp: '{needs}, and a --server command offers only the HTTP contract',
  onPostgres: '{needs}, and stage {stage} keeps its data in PostgreSQL',
})

/** What a check needs besides the HTTP contract, as the skip line says it. */
const NEEDS: Record<NonNullable<Check['needs']>, Line> = {
  database: say('database'),
  'sqlite-file': say('sqliteFile'),
  'learner-code': say('learnerCode'),
}
