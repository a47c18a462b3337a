// The bank the day is replayed against, behind the fault proxy. A stage on
// SQLite runs one server on its database file, as a learner does. A stage on
// PostgreSQL (course.json "database": "postgres", stage 6) runs as it would in
// production: PostgreSQL (harness/postgres.ts: embedded, or LAB_DATABASE_URL's
// server) with a database of its own, three instances of the stage's bank on
// it, and the proxy balancing round-robin over them. The mid-day crash
// SIGKILLs one instance, the one holding the most of the planned requests;
// the others carry on, and the retries of what it held reach them.
import { BankClient } from '#harness/bankClient.ts'
import type { Stage } from '#harness/course.ts'
import type { HttpClient } from '#harness/http.ts'
import { databasesPerPath, startPostgres, type GradeDatabases } from '#harness/postgres.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import type { Workspace } from '#harness/workspace.ts'
import { FaultProxy } from './proxy.ts'
import type { ServerControl } from './replayer.ts'

/** How many instances of a stage on PostgreSQL share its database: enough that round-robin spreads a key's retries over several. */
export const POSTGRES_INSTANCES = 3

/** An instance the replay SIGKILLed (1-based, as the report prints it), and how many requests it held. */
export type KilledInstance = { instance: number; heldRequests: number }

export type InstancesOptions = {
  stage: Stage
  workspace: Workspace
  adminToken: string
  http: HttpClient
  /** The servers' settings (run.ts: REPLAY_ENV). */
  env: Record<string, string>
}

export class BankInstances {
  readonly servers: ServerProcess[] = []
  readonly banks: BankClient[] = []
  readonly killed: KilledInstance[] = []
  proxy: FaultProxy | undefined
  private pg: GradeDatabases | undefined

  constructor(private readonly options: InstancesOptions) {}

  /** Starts the database (for PostgreSQL), the instances and the balancer; stop() undoes whatever part of it ran. */
  async start(): Promise<FaultProxy> {
    const { stage, workspace, adminToken, http, env } = this.options
    const dbPath = workspace.newDbPath()
    let database: Record<string, string> = {}
    let count = 1
    if (stage.database === 'postgres') {
      this.pg = databasesPerPath(await startPostgres())
      database = await this.pg.envFor(dbPath)
      count = POSTGRES_INSTANCES
    }
    for (let i = 0; i < count; i++) {
      const server = new ServerProcess({ stageDir: workspace.stageDir(stage), dbPath, adminToken, env: { ...env, ...database } })
      this.servers.push(server)
      this.banks.push(new BankClient(server, http, adminToken))
    }
    // At once: the bank creates its schema under a lock (bank/pg/db.ts), and a failed start stops its own process.
    const starts = await Promise.allSettled(this.servers.map((s) => s.start()))
    const failed = starts.find((s) => s.status === 'rejected')
    if (failed) throw failed.reason
    this.proxy = new FaultProxy(this.servers.map((s) => s.url))
    await this.proxy.start()
    return this.proxy
  }

  /** What the replayer needs (replayer.ts ServerControl), over every instance. */
  readonly control: ServerControl = {
    hold: async () => void (await Promise.all(this.banks.map((b) => b.core({ hold: true })))),
    inflight: async () => (await this.heldPerInstance()).reduce((a, b) => a + b, 0),
    killAndRestart: () => this.killAndRestart(),
  }

  /** Why the replay cannot be trusted: an instance that died without being killed, or undefined. */
  deadInstance(): string | undefined {
    const i = this.servers.findIndex((s) => !s.alive)
    if (i < 0) return undefined
    const server = this.servers[i]!
    return `instance ${i + 1} of ${this.servers.length} ${server.unexpectedExit ?? 'stopped'} during the replay; its last lines:\n${server.logTail()}`
  }

  async stop(): Promise<void> {
    await this.proxy?.stop()
    await Promise.all(this.servers.map((s) => s.stop()))
    // Drops the database and stops an embedded PostgreSQL (on Ctrl-C, processes.ts kills it instead).
    await this.pg?.dispose()
  }

  private heldPerInstance(): Promise<number[]> {
    return Promise.all(this.banks.map(async (b) => (await b.core({})).inflight))
  }

  private async killAndRestart(): Promise<void> {
    const held = await this.heldPerInstance()
    const victim = held.indexOf(Math.max(...held))
    const server = this.servers[victim]!
    this.proxy!.takeOut(victim)
    await server.crash()
    // The survivors were only held so that the kill could find the planned requests inside: what they hold completes.
    await Promise.all(this.banks.filter((_, i) => i !== victim).map((b) => b.core({ hold: false })))
    // Again on the same options, hence the same database; a fresh process holds nothing.
    await server.start()
    this.proxy!.putBack(victim, server.url)
    this.killed.push({ instance: victim + 1, heldRequests: held[victim]! })
  }
}
