import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyRowState, lockRowsHolding, withLayerStore } from '#grader/checks/layerDatabase.ts'
import type { BankClient } from '#harness/bankClient.ts'
import { havePostgres, scratchDatabase } from './helpers/postgres.ts'
import { scratchDir } from './helpers/scratch.ts'

const uuid = '6f1c2a9e-3b7d-4e52-9a41-0c8d5e7f1b23'
const tricky = 'a"b\\c,d (e)'
/** Only the bank's store is read: its database path, or its LAB_DATABASE_URL. */
const bankOn = (store: { dbPath?: string; url?: string }) =>
  ({ server: { options: { dbPath: store.dbPath ?? '', env: store.url ? { LAB_DATABASE_URL: store.url } : {} } } }) as unknown as BankClient

/** Per layer table, the rows holding `key` (the bank's own tables never listed). */
const holding = (bank: BankClient, key: string) =>
  withLayerStore(bank, async (store) => {
    const found: Record<string, number> = {}
    for (const table of await store.tables()) found[table] = (await store.rows(table, key)).length
    return found
  })

describe('the rows holding a key, on SQLite', () => {
  const scratch = scratchDir('layer-db')
  const dbPath = join(scratch.path, 'bank.sqlite')
  afterAll(() => scratch.dispose())

  beforeAll(() => {
    const db = new Database(dbPath)
    db.exec(`
      CREATE TABLE ledger (id TEXT, note TEXT);
      CREATE TABLE "odd ""name""" (k TEXT PRIMARY KEY, note TEXT, body BLOB, n REAL);
      CREATE TABLE log (k TEXT, at INTEGER);
    `)
    const odd = db.prepare('INSERT INTO "odd ""name""" VALUES (?, ?, ?, ?)')
    odd.run(uuid, null, null, 1.5)
    odd.run(`idem:cl_1:POST:/transfers:${tricky}`, 'composite', null, null)
    odd.run('r3', null, Buffer.from(`{"key":"blob-${uuid.slice(0, 8)}"}`), null)
    odd.run('r4', 'nothing', null, null)
    db.prepare('INSERT INTO log VALUES (?, ?)').run(uuid, 1)
    db.prepare('INSERT INTO log VALUES (?, ?)').run(uuid, 2)
    db.prepare('INSERT INTO ledger VALUES (?, ?)').run(uuid, 'the bank')
    db.close()
  })

  it.for([
    ['the whole value', uuid, { 'odd "name"': 1, log: 2 }],
    ['inside a composite value, with " \\ , ( ) in the key', tricky, { 'odd "name"': 1, log: 0 }],
    ['inside a BLOB', `blob-${uuid.slice(0, 8)}`, { 'odd "name"': 1, log: 0 }],
    ['"null" is not a NULL cell', 'null', { 'odd "name"': 0, log: 0 }],
  ] as const)('a key as %s', async ([, key, expected]) => {
    expect(await holding(bankOn({ dbPath }), key)).toEqual(expected)
  })

  it("the key's row is the one row of the first table with exactly one: a log of the key names no state", () => {
    expect(keyRowState(dbPath, uuid)).toEqual({ table: 'odd "name"', row: { k: uuid, note: null, body: null, n: 1.5 } })
    expect(keyRowState(dbPath, 'absent')).toBeUndefined()
  })
})

describe.skipIf(!havePostgres)('the rows holding a key, on PostgreSQL', () => {
  const db = scratchDatabase(async (client) => {
    await client.query(`
      CREATE TABLE ledger (id TEXT, note TEXT);
      CREATE TABLE "odd ""name""" (k TEXT PRIMARY KEY, note TEXT, body BYTEA, doc JSONB);
      CREATE TABLE log (k TEXT, at INTEGER);
    `)
    const odd = 'INSERT INTO "odd ""name""" VALUES ($1, $2, $3, $4)'
    await client.query(odd, [uuid, null, null, null])
    await client.query(odd, [`idem:cl_1:POST:/transfers:${tricky}`, 'composite', null, null])
    await client.query(odd, ['r3', null, Buffer.from(`{"key":"blob-${uuid.slice(0, 8)}"}`), { key: `json-${uuid.slice(0, 8)}` }])
    await client.query('INSERT INTO log VALUES ($1, 1), ($1, 2)', [uuid])
    await client.query('INSERT INTO ledger VALUES ($1, $2)', [uuid, 'the bank'])
  })

  it.for([
    ['the whole value', uuid, { 'odd "name"': 1, log: 2 }],
    ['inside a composite value, with " \\ , ( ) in the key', tricky, { 'odd "name"': 1, log: 0 }],
    ['inside a bytea', `blob-${uuid.slice(0, 8)}`, { 'odd "name"': 1, log: 0 }],
    ['inside a jsonb value', `json-${uuid.slice(0, 8)}`, { 'odd "name"': 1, log: 0 }],
    ['"null" is not a NULL cell', 'null', { 'odd "name"': 0, log: 0 }],
  ] as const)('a key as %s', async ([, key, expected]) => {
    const bank = bankOn({ url: db.database().url })
    expect(await holding(bank, key)).toEqual(expected)
    const counted = await withLayerStore(bank, async (store) =>
      Object.fromEntries(await Promise.all(['odd "name"', 'log'].map(async (t) => [t, await store.count(t, key)]))),
    )
    expect(counted).toEqual(expected)
  })

  it('locks the rows holding a key, in every layer table, and only those', async () => {
    const client = db.client()
    await client.query('BEGIN')
    try {
      expect(await lockRowsHolding(client, uuid)).toBe(3)
      expect(await lockRowsHolding(client, tricky)).toBe(1)
    } finally {
      await client.query('ROLLBACK')
    }
  })
})
