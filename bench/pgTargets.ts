// The banks of the PostgreSQL bench: one PostgreSQL server for all of them
// (harness/postgres.ts: the embedded one, or LAB_DATABASE_URL's), and per bank
// under test a database of its own with one or several bank processes on it.
//
// The stage 0 starter runs on PostgreSQL unchanged: its layer only calls
// op.execute(), which in PostgreSQL mode is the same money transaction as
// stage 6's (bank/pg/app.ts), so the pair differs by the layer alone.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { BankClient } from '#harness/bankClient.ts'
import { HttpClient } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import { childEnv, onCleanup } from '#harness/processes.ts'
import { type PgDatabase, type PgServer, startPostgres } from '#harness/postgres.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import { type LoadTarget, mainThreadCpuMs } from './load.ts'

/** The contract's largest amount: a balance nothing in a bench run can exhaust. */
const HUGE_BALANCE = 1_000_000_000_000

export type PgTarget = LoadTarget & { stage: number; instances: number; database: PgDatabase }

export type PgStartup = {
  kind: PgServer['kind']
  /** initdb + start of the embedded server, until it answers a query (0 for an external server). */
  startMs: number
  /** Each CREATE DATABASE, one per bank under test. */
  createDatabaseMs: number[]
  /** Stopping every bank, dropping every database and stopping the server (set by stop()). */
  stopMs: number | null
}

export class PgTargets {
  private readonly tmp = mkdtempSync(join(tmpdir(), 'idem-bench-pg-'))
  /** Removed by stop(), or on exit and Ctrl-C if stop() never ran. */
  private readonly forgetTmp = onCleanup(() => rmSync(this.tmp, { recursive: true, force: true }))
  private server: PgServer | undefined
  private readonly forgetDrops: Array<() => void> = []
  /** Everything started, also what a failed start left half done: stop() stops these. */
  private readonly servers: ServerProcess[] = []
  private readonly databases: PgDatabase[] = []
  readonly list: PgTarget[] = []
  readonly startup: PgStartup = { kind: 'embedded', startMs: 0, createDatabaseMs: [], stopMs: null }

  /** Starts PostgreSQL, then for each instance count and stage a database and that many banks on it. */
  async start(stages: Array<{ number: number; label: string }>, instanceCounts: number[], log: (line: string) => void): Promise<void> {
    this.server = await startPostgres()
    this.startup.kind = this.server.kind
    this.startup.startMs = this.server.startMs
    log(this.server.kind === 'embedded' ? `embedded PostgreSQL ready in ${this.server.startMs} ms` : 'PostgreSQL at LAB_DATABASE_URL')
    for (const instances of instanceCounts)
      for (const stage of stages) {
        const created = performance.now()
        const database = await this.server.createDatabase()
        this.databases.push(database)
        this.startup.createDatabaseMs.push(Math.round(performance.now() - created))
        if (this.server.kind === 'external') this.forgetDrops.push(onCleanup(() => dropSync(database)))
        log(`starting ${instances} × ${stage.label} on database ${database.name}`)
        this.list.push(await this.startBank(stage.number, stage.label, instances, database))
      }
    const postmaster = await postmasterPid(this.server, this.list[0]?.database)
    if (postmaster !== null) for (const target of this.list) target.databaseCpuMs = () => clusterCpuMs(postmaster)
  }

  private async startBank(stage: number, label: string, instances: number, database: PgDatabase): Promise<PgTarget> {
    const adminToken = `adm_${randomBytes(16).toString('hex')}`
    const servers: ServerProcess[] = []
    for (let i = 1; i <= instances; i++) {
      const server = new ServerProcess({
        stageDir: resolve(repoRoot, label),
        // Unused in PostgreSQL mode; a path of ours so that nothing is written in the checkout.
        dbPath: join(this.tmp, `${database.name}-${i}.sqlite`),
        adminToken,
        env: { LAB_PROCESSING_DELAY_MS: '0', LAB_DATABASE_URL: database.url },
      })
      servers.push(server)
      this.servers.push(server)
      await server.start()
    }
    // The instances share the database, so the client and accounts made through the first are everyone's.
    const bank = new BankClient(servers[0]!, new HttpClient(() => {}), adminToken)
    const customer = await bank.newCustomer('bench')
    const from = await bank.openAccount(customer, HUGE_BALANCE)
    const to = await bank.openAccount(customer, HUGE_BALANCE)
    return { stage, label, instances, database, servers, customer, from, to }
  }

  /** Rows in the target's ledger: how many transfers it really executed. */
  static async ledgerRows(target: PgTarget): Promise<number> {
    const client = new pg.Client({ connectionString: target.database.url })
    await client.connect()
    try {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM ledger')
      return Number(rows[0]!.n)
    } finally {
      await client.end()
    }
  }

  /** Banks first (they hold connections), then every database, then the server; each step even if an earlier one failed. */
  async stop(): Promise<void> {
    const started = performance.now()
    await Promise.allSettled(this.servers.map((s) => s.stop()))
    await Promise.allSettled(this.databases.map((d) => d.drop()))
    for (const forget of this.forgetDrops) forget()
    try {
      await this.server?.stop()
    } finally {
      rmSync(this.tmp, { recursive: true, force: true })
      this.forgetTmp()
      this.startup.stopMs = Math.round(performance.now() - started)
    }
  }
}

/**
 * An external server's database must not outlive a Ctrl-C either; the exit
 * hook can only run synchronous code, so a child node drops it. (An embedded
 * server's databases go with its cluster folder, which harness/postgres.ts removes.)
 */
function dropSync(database: PgDatabase) {
  const admin = new URL(database.url)
  admin.pathname = '/postgres'
  const script = `import pg from 'pg'
const c = new pg.Client({ connectionString: process.env.ADMIN_URL })
await c.connect()
await c.query('DROP DATABASE IF EXISTS ' + process.env.DATABASE + ' WITH (FORCE)')
await c.end()`
  spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: repoRoot,
    env: childEnv({ ADMIN_URL: admin.href, DATABASE: database.name }),
    stdio: 'ignore',
    timeout: 10_000,
  })
}

/** The embedded server's postmaster: the parent of the backend serving a connection of ours. External servers are not ours to look into. */
async function postmasterPid(server: PgServer, database: PgDatabase | undefined): Promise<number | null> {
  if (server.kind !== 'embedded' || !database) return null
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    return procStat(rows[0]!.pid)?.ppid ?? null
  } finally {
    await client.end()
  }
}

const TICKS_PER_SECOND = 100 // getconf CLK_TCK: 100 on every Linux build the lab runs on

/** ppid and the CPU of reaped children (ms) from /proc/PID/stat; the fields after the command name, which may hold spaces. */
function procStat(pid: number): { ppid: number; reapedChildrenMs: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    // fields[0] is field 3 (state): ppid is field 4, cutime and cstime fields 16 and 17.
    const reapedTicks = Number(fields[13]) + Number(fields[14])
    return { ppid: Number(fields[1]), reapedChildrenMs: (reapedTicks * 1000) / TICKS_PER_SECOND }
  } catch {
    return null
  }
}

/**
 * CPU time of the whole PostgreSQL server so far: the postmaster, each live
 * child (a backend per pooled connection, the WAL writer, the checkpointer,
 * autovacuum: single-threaded processes, so their main thread is all of
 * them), and the children it has already reaped (a backend whose connection
 * the bank's pool closed when idle).
 */
function clusterCpuMs(postmaster: number): number | null {
  const own = mainThreadCpuMs(postmaster)
  const stat = procStat(postmaster)
  if (own === null || stat === null) return null
  let total = own + stat.reapedChildrenMs
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || procStat(Number(entry))?.ppid !== postmaster) continue
    total += mainThreadCpuMs(Number(entry)) ?? 0
  }
  return total
}
