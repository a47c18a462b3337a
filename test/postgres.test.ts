// Where stage 6's PostgreSQL comes from (harness/postgres.ts): an embedded
// server of the grade's own, or the server LAB_DATABASE_URL names, on which
// a grade only creates a database of its own and drops it afterwards.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { grade } from '#grader/grade.ts'
import { startPostgres, type PgDatabase, type PgServer } from '#harness/postgres.ts'
import { findBwrap } from '#harness/sandbox.ts'

async function databaseNames(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ datname: string }>('SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY datname')
    return rows.map((r) => r.datname)
  } finally {
    await client.end()
  }
}

let server: PgServer
/** Stands for "a server of your own": a database on an embedded server, named by its URL only. */
let own: PgDatabase

beforeAll(async () => {
  server = await startPostgres({})
  own = await server.createDatabase()
}, 90_000)

afterAll(async () => {
  await own?.drop()
  await server?.stop()
})

describe('PostgreSQL for stage 6', () => {
  it('the embedded server gives each database its own name, and drops it', async () => {
    expect(server.kind).toBe('embedded')
    const extra = await server.createDatabase()
    expect(extra.name).not.toBe(own.name)
    expect(await databaseNames(own.url)).toContain(extra.name)
    await extra.drop()
    expect(await databaseNames(own.url)).not.toContain(extra.name)
  })

  it('with LAB_DATABASE_URL, a grade runs on that server, in a database of its own that it drops', { timeout: 300_000 }, async () => {
    const before = await databaseNames(own.url)
    process.env.LAB_DATABASE_URL = own.url
    // Read at the check's first request: its servers run on the grade's database by then, and the
    // check sends many more requests (three instances, a held burst) before the grade can drop it.
    let during: Promise<string[]> | undefined
    try {
      const result = await grade({
        stage: 6,
        seed: 6,
        source: { kind: 'solution' },
        only: ['three-instances-execute-once'],
        onExchange: () => {
          during ??= databaseNames(own.url)
        },
      })
      expect(result.checks.map((c) => [c.id, c.status, c.message])).toEqual([['three-instances-execute-once', 'pass', '']])
    } finally {
      delete process.env.LAB_DATABASE_URL
    }
    const created = (await during!).filter((name) => !before.includes(name))
    expect(created, 'the grade made one database of its own on the given server').toHaveLength(1)
    expect(created[0]).toMatch(/^lab_/)
    expect(await databaseNames(own.url), 'and dropped it').toEqual(before)
  })

  it('a sandboxed grade refuses a LAB_DATABASE_URL over TCP: the sandbox has no network', async () => {
    const tcp = new URL(own.url)
    tcp.searchParams.delete('host')
    process.env.LAB_DATABASE_URL = tcp.href
    try {
      await expect(grade({ stage: 6, seed: 6, source: { kind: 'solution' }, only: ['skewed-clocks'], sandbox: true })).rejects.toThrow(/--no-sandbox/)
    } finally {
      delete process.env.LAB_DATABASE_URL
    }
  })

  it.skipIf(!findBwrap().path)(
    'a sandboxed grade reaches a LAB_DATABASE_URL over its Unix socket (host=/a/folder), which the sandbox binds',
    { timeout: 300_000 },
    async () => {
      expect(new URL(own.url).searchParams.get('host')).toMatch(/^\//)
      process.env.LAB_DATABASE_URL = own.url
      try {
        const result = await grade({ stage: 6, seed: 6, source: { kind: 'solution' }, only: ['skewed-clocks'], sandbox: true })
        expect(result.checks.map((c) => [c.id, c.status, c.message])).toEqual([['skewed-clocks', 'pass', '']])
      } finally {
        delete process.env.LAB_DATABASE_URL
      }
    },
  )
})
