// One grading's settings: its workspace, its admin token, how to start a
// server of the graded stage, and the shared server. The runner (runner.ts)
// walks the checks and keeps what they find (Findings); this module sets the
// grading up, starts the shared server and tears it all down.
import { randomBytes } from 'node:crypto'
import type { Check } from './check.ts'
import type { CheckResult } from './checkResult.ts'
import { deniedSolutionRead, describeRefusals, findCopiedAnswers } from '../policing/copiedAnswers.ts'
import { keepServer, type KeptServer } from './keep.ts'
import { sandboxExports } from '../policing/learnerCode.ts'
import { stageByNumber, type Stage } from '#harness/course.ts'
import type { Exchange } from '#harness/http.ts'
import { databasesPerPath, startPostgres, type GradeDatabases, type PgServer } from '#harness/postgres.ts'
import { stageSandbox } from '#harness/sandbox.ts'
import type { ServerCommand } from '#harness/serverCommand.ts'
import { clockIsControlled, GradeClock } from '#harness/gradeClock.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import { Workspace, type ScanTarget, type Source } from '#harness/workspace.ts'

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
  /** Replace bank/main.ts (the grader's self-tests use scenario servers). */
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
  /** How many random histories each histories check runs (--histories; default HISTORIES_DEFAULT). */
  histories?: number
}

/**
 * One grading's settings, fixed once prepareRun returns, and its shared
 * server, which only startShared and endRun start, replace and stop.
 */
export type Run = {
  readonly options: GradeOptions
  readonly graded: Stage
  readonly workspace: Workspace
  readonly adminToken: string
  readonly defaultDb: string
  /** What the copied-answer scan looks at for the graded stage. */
  readonly scanned: ScanTarget
  /** A stage on PostgreSQL (6): the grade's server, and a database per database file. */
  readonly pg?: GradeDatabases
  /** The grade's timeline (gradeClock.ts): every server and database of the grade follows it unless given another. */
  readonly clock: GradeClock
  newServer(dbPath: string, env?: Record<string, string>, clock?: GradeClock): Promise<ServerProcess>
  /** One shared server for all checks; started again if a check killed it. */
  shared?: ServerProcess
  /** How long the shared server's first successful start took. */
  serverStartMs: number
}

/**
 * What a grading has found out about the graded code so far. The runner's
 * loop alone holds it: each check's grading is given the findings and returns
 * them, updated, so no verdict changes between two reads of it.
 */
export type Findings = {
  /** Why the graded folder scores nothing (it loads the answer), or ''. */
  readonly copied: string
  /** The check that reported the failed start; the others only point at it. */
  readonly startFailedIn?: string
  /** The requests of the first failing check: --keep lists the clients and accounts they made. */
  readonly failedTrace?: Exchange[]
}

export async function prepareRun(options: GradeOptions): Promise<Run> {
  const graded = stageByNumber(options.stage)
  const pg =
    graded.database !== 'postgres'
      ? undefined
      : options.postgres
        ? databasesPerPath(options.postgres, { shared: true })
        : databasesPerPath(await startDatabase(options, graded))
  if (pg && options.sandbox && !pg.server.socketDir) {
    await pg.dispose()
    throw new Error('the sandbox has no network, so it cannot reach LAB_DATABASE_URL: grade with --no-sandbox')
  }
  const workspace = new Workspace(options.source ?? { kind: 'starter' })
  const adminToken = `adm_${randomBytes(16).toString('hex')}`
  // The embedded PostgreSQL's socket folder is the one way out of the sandbox that a stage-6 bank has.
  const writable = [workspace.tmp, ...(pg?.server.socketDir ? [pg.server.socketDir] : [])]
  const sandbox = options.sandbox ? { ...stageSandbox(graded, [workspace.stageDir(graded)], writable), tmp: options.sandboxTmp } : undefined
  sandboxExports(options.sandbox ? { dataDir: workspace.tmp, tmp: options.sandboxTmp } : undefined)
  const scanned = workspace.scanTarget(graded)
  // The bank always offers PUT /admin/clock; the self-tests' scenario servers (entry) never do, and a --server is asked once it runs.
  const gradeClock = new GradeClock(!options.realClock && !options.entry)
  return {
    options,
    graded,
    workspace,
    adminToken,
    defaultDb: workspace.newDbPath(),
    scanned,
    pg,
    clock: gradeClock,
    newServer: async (dbPath, env = {}, clock = gradeClock) => {
      const fullEnv = { ...(await pg?.envFor(dbPath, clock)), ...env }
      return options.server
        ? foreignServer(options, options.server, workspace, adminToken, dbPath, fullEnv, clock)
        : new ServerProcess({
            clock,
            stageDir: workspace.stageDir(graded),
            dbPath,
            adminToken,
            env: fullEnv,
            entry: options.entry,
            startTimeoutMs: options.startTimeoutMs,
            // The sandbox leaves solutions/ out altogether; without one, Node's permission model keeps it unreadable.
            ...(sandbox ? { sandbox } : { confineAsStage: graded.number }),
          })
    },
    serverStartMs: 0,
  }
}

/** What is known before any server starts: a folder that loads the answer scores nothing (a --server command loads none of ours). */
export function findingsBeforeStart(run: Run): Findings {
  return { copied: run.options.server ? '' : describeRefusals(findCopiedAnswers(run.scanned)) }
}

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

/** A --server command brings its own code: the same contract, the same environment, its own sandbox. */
function foreignServer(
  options: GradeOptions,
  command: ServerCommand,
  workspace: Workspace,
  adminToken: string,
  dbPath: string,
  env: Record<string, string>,
  clock: GradeClock,
) {
  return new ServerProcess({
    clock,
    command,
    stageDir: workspace.stageDir(stageByNumber(options.stage)),
    dbPath,
    adminToken,
    env,
    startTimeoutMs: options.startTimeoutMs,
    sandbox: options.sandbox ? { readOnly: [], writable: [workspace.tmp], tmp: options.sandboxTmp } : undefined,
  })
}

/**
 * Starts the shared server. If it did not start, returns why, and the copied
 * answer its failure revealed: a computed path into solutions/ that the
 * permission model stopped ('' when the failure is not that).
 */
export async function startShared(run: Run): Promise<{ error: string; copied: string } | undefined> {
  try {
    run.shared = await run.newServer(run.defaultDb)
    await run.shared.start()
    run.serverStartMs ||= run.shared.lastStartMs
    // A --server may not offer PUT /admin/clock: then the grade waits on real time.
    if (run.options.server && run.clock.controlled && !(await clockIsControlled(run.shared))) run.clock.useRealTime()
    return undefined
  } catch (error) {
    const message = (error as Error).message
    return { error: run.workspace.asLearnerPaths(message), copied: deniedSolutionRead(run.scanned.shownAs, message) ?? '' }
  }
}

/** Stops the shared server and removes the folders, or with --keep leaves the first failure's server running. */
export async function endRun({ options, shared, workspace, adminToken, pg }: Run, { failedTrace }: Findings): Promise<KeptServer | undefined> {
  if (options.keep && failedTrace && shared?.alive) return keepServer(shared, workspace, adminToken, failedTrace)
  await shared?.stop()
  workspace.dispose()
  await pg?.dispose()
  return undefined
}
