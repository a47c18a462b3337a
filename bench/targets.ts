// The servers under test: the stage 0 starter and each later stage's reference
// solution, each a bank of one or several processes on a fresh database of its
// own, with one client and two accounts so rich that no transfer is ever
// refused for funds. The database is the store's (a BenchStore below): a
// SQLite file per bank, or a database per bank on one PostgreSQL server
// (harness/postgres.ts: the embedded one, or LAB_DATABASE_URL's).
//
// The stage 0 starter runs on PostgreSQL unchanged: its layer only calls
// op.execute(), which is the same money transaction as stage 6's
// (bank/pg/store.ts), so the pair differs by the layer alone.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { BankClient } from '#harness/bankClient.ts'
import { course } from '#harness/course.ts'
import { HttpClient } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import { childEnv, onCleanup } from '#harness/processes.ts'
import { type PgDatabase, type PgServer, startPostgres } from '#harness/postgres.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import { type LoadTarget, mainThreadCpuMs } from './load.ts'

/** The contract's largest amount: a balance nothing in a bench run can exhaust. */
const HUGE_BALANCE = 1_000_000_000_000

export type StoreName = 'sqlite' | 'postgres'

/** A bank to start: a stage's folder, on this many processes sharing its database. */
export type Bank = { stage: number; label: string; instances: number }

export type Target = LoadTarget &
  Bank & {
    /** Rows in the ledger: how many transfers the bank really executed. */
    ledgerRows(): Promise<number>
  }

/** What the database server itself cost to set up and take down; only PostgreSQL has one. */
export type Startup = {
  kind: PgServer['kind']
  /** initdb + start of the embedded server, until it answers a query (0 for an external server). */
  startMs: number
  /** Each CREATE DATABASE, one per bank under test. */
  createDatabaseMs: number[]
  /** Dropping every database and stopping the server, once the banks are stopped (set by stop()). */
  stopMs: number | null
}

/** Stage 0's starter is what learners start from; every later stage is measured as its reference solution. */
export function benchedFolder(number: number): string {
  const stage = course.stages.find((s) => s.number === number)
  if (!stage) throw new Error(`course.json has no stage ${number}`)
  return number === 0 ? `stages/${stage.folder}` : `solutions/${stage.folder}`
}

/** A fresh database for one bank: what its processes are started with, and how to count its ledger. */
type BankDatabase = { env: Record<string, string>; dbPath: string; ledgerRows(): Promise<number> }

/** One store's databases: made one per bank, all of them gone after stop(). */
type BenchStore = {
  start(log: (line: string) => void): Promise<void>
  database(name: string): Promise<BankDatabase>
  /** CPU time the database server has used so far (ms), when it is a process of its own we can see. */
  databaseCpuMs(): Promise<(() => number | null) | undefined>
  stop(): Promise<void>
  readonly startup?: Startup
}

export class Targets {
  private readonly tmp = mkdtempSync(join(tmpdir(), 'idem-bench-'))
  /** Removed by stop(), or on exit and Ctrl-C if stop() never ran. */
  private readonly forgetTmp = onCleanup(() => rmSync(this.tmp, { recursive: true, force: true }))
  private readonly store: BenchStore
  /** Everything started, also what a failed start left half done: stop() stops these. */
  private readonly servers: ServerProcess[] = []
  readonly list: Target[] = []

  constructor(store: StoreName) {
    this.store = store === 'sqlite' ? sqliteStore(this.tmp) : postgresStore()
  }

  /** PostgreSQL's own start-up and stop, reported apart from the banks' figures (undefined on SQLite). */
  get startup(): Startup | undefined {
    return this.store.startup
  }

  /** Starts each bank, one process after the other (starting them in parallel would only slow each start). */
  async start(banks: Bank[], log: (line: string) => void): Promise<void> {
    await this.store.start(log)
    for (const bank of banks) {
      const name = `stage${bank.stage}_x${bank.instances}`
      const database = await this.store.database(name)
      log(`starting ${bank.instances} × ${bank.label} on ${name}`)
      this.list.push(await this.startBank(bank, database))
    }
    const databaseCpuMs = await this.store.databaseCpuMs()
    if (databaseCpuMs) for (const target of this.list) target.databaseCpuMs = databaseCpuMs
  }

  private async startBank(bank: Bank, database: BankDatabase): Promise<Target> {
    const adminToken = `adm_${randomBytes(16).toString('hex')}`
    const servers: ServerProcess[] = []
    for (let i = 1; i <= bank.instances; i++) {
      const profile = profiling(bank.instances === 1 ? `stage-${bank.stage}` : `stage-${bank.stage}-x${bank.instances}-${i}`, bank.stage)
      const server = new ServerProcess({
        stageDir: resolve(repoRoot, bank.label),
        dbPath: database.dbPath,
        adminToken,
        env: { LAB_PROCESSING_DELAY_MS: '0', ...database.env, ...profile.env },
        entry: profile.entry,
      })
      servers.push(server)
      this.servers.push(server)
      await server.start()
    }
    // The instances share the database, so the client and accounts made through the first are everyone's.
    const client = new BankClient(servers[0]!, new HttpClient(() => {}), adminToken)
    const customer = await client.newCustomer('bench')
    const from = await client.openAccount(customer, HUGE_BALANCE)
    const to = await client.openAccount(customer, HUGE_BALANCE)
    return { ...bank, servers, customer, from, to, ledgerRows: database.ledgerRows }
  }

  /** Banks first (they hold connections), then the store's databases and server; each step even if an earlier one failed. */
  async stop(): Promise<void> {
    await Promise.allSettled(this.servers.map((s) => s.stop()))
    try {
      await this.store.stop()
    } finally {
      rmSync(this.tmp, { recursive: true, force: true })
      this.forgetTmp()
    }
  }
}

/** A SQLite file per bank, in the bench's scratch folder. */
function sqliteStore(tmp: string): BenchStore {
  return {
    async start() {},
    async database(name) {
      const dbPath = join(tmp, `${name}.sqlite`)
      return {
        env: {},
        dbPath,
        async ledgerRows() {
          const db = new Database(dbPath, { readonly: true, fileMustExist: true })
          try {
            return (db.prepare('SELECT count(*) AS n FROM ledger').get() as { n: number }).n
          } finally {
            db.close()
          }
        },
      }
    },
    // SQLite runs in the bank's own thread: its CPU is the bank's.
    async databaseCpuMs() {
      return undefined
    },
    async stop() {},
  }
}

/** One PostgreSQL server, a database per bank on it. */
function postgresStore(): BenchStore {
  const tmp = mkdtempSync(join(tmpdir(), 'idem-bench-pg-'))
  let server: PgServer | undefined
  const databases: PgDatabase[] = []
  const forgetDrops: Array<() => void> = []
  const startup: Startup = { kind: 'embedded', startMs: 0, createDatabaseMs: [], stopMs: null }
  return {
    startup,
    async start(log) {
      server = await startPostgres()
      startup.kind = server.kind
      startup.startMs = server.startMs
      log(server.kind === 'embedded' ? `embedded PostgreSQL ready in ${server.startMs} ms` : 'PostgreSQL at LAB_DATABASE_URL')
    },
    async database(name) {
      const created = performance.now()
      const database = await server!.createDatabase()
      databases.push(database)
      startup.createDatabaseMs.push(Math.round(performance.now() - created))
      if (server!.kind === 'external') forgetDrops.push(onCleanup(() => dropSync(database)))
      return {
        env: { LAB_DATABASE_URL: database.url },
        // Unused in PostgreSQL mode; a path of ours so that nothing is written in the checkout.
        dbPath: join(tmp, `${name}.sqlite`),
        ledgerRows: () => withClient(database, async (client) => Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM ledger')).rows[0]!.n)),
      }
    },
    async databaseCpuMs() {
      const postmaster = await postmasterPid(server!, databases[0])
      return postmaster === null ? undefined : () => clusterCpuMs(postmaster)
    },
    async stop() {
      const started = performance.now()
      await Promise.allSettled(databases.map((d) => d.drop()))
      for (const forget of forgetDrops) forget()
      try {
        await server?.stop()
      } finally {
        rmSync(tmp, { recursive: true, force: true })
        startup.stopMs = Math.round(performance.now() - started)
      }
    },
  }
}

async function withClient<T>(database: PgDatabase, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url })
  await client.connect()
  try {
    return await use(client)
  } finally {
    await client.end()
  }
}

/**
 * BENCH_CPU_PROF=DIR profiles the servers: each writes DIR/<name>.cpuprofile
 * when it stops (open it in Chrome DevTools or speedscope, or summarize it
 * with bench/profileSummary.ts). BENCH_CPU_PROF_STAGES=0,5 limits it to some stages.
 */
function profiling(name: string, stage: number): { entry?: string; env: Record<string, string> } {
  const dir = process.env.BENCH_CPU_PROF
  const only = process.env.BENCH_CPU_PROF_STAGES?.split(',').map(Number)
  if (!dir || (only && !only.includes(stage))) return { env: {} }
  mkdirSync(dir, { recursive: true })
  return { entry: 'bench/profiledMain.ts', env: { BENCH_CPU_PROF_FILE: resolve(dir, `${name}.cpuprofile`) } }
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
  const pid = await withClient(database, async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid)
  return procStat(pid)?.ppid ?? null
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
