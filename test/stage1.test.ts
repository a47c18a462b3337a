// Stage 1 (unique-key): solution, starter and mutants (see helpers/stageSuite.ts).
// Also: the in-memory lock is caught only by the two-process check, and the
// key-table inspection tells a real uniqueness constraint from the ones that
// only look like one.
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { inspectKeyTable } from '#grader/checks/keyTable.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { stage1Mutants } from '#grader/mutants/stage1.ts'
import { grade } from '#grader/grade.ts'
import { scratchDir } from './helpers/scratch.ts'
import { failures, stageSuite } from './helpers/stageSuite.ts'

stageSuite(1, {
  mutants: stage1Mutants,
  // The starter executes every request, as stage 0 did: only "distinct keys
  // execute" holds, and so does "keys differing in case are distinct"; it
  // keeps no table, so no credential at rest either.
  starterPasses: ['distinct-keys-distinct-transfers', 'key-case-sensitive', 'no-credentials-at-rest'],
})

describe('the in-memory lock', () => {
  it('the in-memory lock passes with one process: only the two-process check can catch it', async () => {
    const mutant = stage1Mutants.find((m) => m.id === 'in-memory-lock')!
    const path = materialize(mutant)
    const r = await grade({ stage: 1, seed: 4_242, source: { kind: 'dir', path }, only: ['simultaneous-retries'] })
    expect(failures(r)).toEqual([])
  })
})

describe('key-table inspection', () => {
  const scratch = scratchDir('keytable')
  afterAll(() => scratch.dispose())
  const keys: [string, string] = ['k-one', 'k-two']
  let n = 0

  /** A database holding the two keys in a table made by `schema`, plus the bank's own ledger. */
  function dbWith(schema: string, rows: Array<Record<string, string>>): string {
    const path = join(scratch.path, `t${++n}.sqlite`)
    const db = new Database(path)
    db.exec('CREATE TABLE ledger (id TEXT PRIMARY KEY)')
    db.exec(schema)
    for (const row of rows)
      db.prepare(
        `INSERT INTO t (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row)
          .map(() => '?')
          .join(', ')})`,
      ).run(...Object.values(row))
    db.close()
    return path
  }
  const plain = keys.map((key, i) => ({ key, created_at: `2026-01-0${i + 1}` }))
  const scoped = keys.map((key) => ({ client_id: 'cl_1', route: 'POST /transfers', key }))

  it.for([
    ['key TEXT PRIMARY KEY', 'CREATE TABLE t (key TEXT PRIMARY KEY, created_at TEXT)', plain],
    ['a UNIQUE column', 'CREATE TABLE t (id INTEGER PRIMARY KEY, key TEXT UNIQUE, created_at TEXT)', plain],
    ['a CREATE UNIQUE INDEX', 'CREATE TABLE t (key TEXT, created_at TEXT); CREATE UNIQUE INDEX t_key ON t (key)', plain],
    [
      "stage 5's PRIMARY KEY (client_id, route, key)",
      'CREATE TABLE t (client_id TEXT, route TEXT, key TEXT, PRIMARY KEY (client_id, route, key)) WITHOUT ROWID',
      scoped,
    ],
  ] as const)('accepts %s', ([, schema, rows]) => {
    expect(inspectKeyTable(dbWith(schema, [...rows]), keys)).toMatchObject({ ok: true, table: 't', column: 'key' })
  })

  // How libraries store it: one text column holding a prefix, the scope and the key.
  const composite = (key: string) => ({ id: `idem:cl_1:POST:/transfers:${key}`, body: '{}' })
  it.for([
    ['a PRIMARY KEY holding prefix:client:METHOD:/route:<key>', 'CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT)'],
    ['a UNIQUE index over such a composite column', 'CREATE TABLE t (n INTEGER PRIMARY KEY, id TEXT, body TEXT); CREATE UNIQUE INDEX t_id ON t (id)'],
  ] as const)('accepts %s', ([, schema]) => {
    expect(inspectKeyTable(dbWith(schema, keys.map(composite)), keys)).toMatchObject({ ok: true, table: 't', column: 'id' })
  })

  it('rejects a composite value whose rest differs between two keys (a timestamp inside)', () => {
    const rows = keys.map((key, i) => ({ id: `${key}@2026-01-0${i + 1}`, body: '{}' }))
    const verdict = inspectKeyTable(dbWith('CREATE TABLE t (id TEXT PRIMARY KEY, body TEXT)', rows), keys)
    expect(verdict.ok ? '' : String(verdict.reason)).toMatch(/differ besides the key/)
  })

  it.for([
    ['no constraint', 'CREATE TABLE t (key TEXT, created_at TEXT)', /no PRIMARY KEY or UNIQUE/],
    ['a plain (non-unique) index', 'CREATE TABLE t (key TEXT, created_at TEXT); CREATE INDEX t_key ON t (key)', /no PRIMARY KEY or UNIQUE/],
    [
      'a partial unique index',
      "CREATE TABLE t (key TEXT, created_at TEXT); CREATE UNIQUE INDEX t_key ON t (key) WHERE created_at > ''",
      /no PRIMARY KEY or UNIQUE/,
    ],
    ['UNIQUE (key, created_at)', 'CREATE TABLE t (key TEXT, created_at TEXT, UNIQUE (key, created_at))', /also covers created_at/],
    ['a unique index on an expression', 'CREATE TABLE t (key TEXT, created_at TEXT); CREATE UNIQUE INDEX t_key ON t (lower(key))', /no PRIMARY KEY or UNIQUE/],
  ] as const)('rejects %s', ([, schema, reason]) => {
    const verdict = inspectKeyTable(dbWith(schema, plain), keys)
    expect(verdict.ok).toBe(false)
    expect(verdict.ok ? '' : String(verdict.reason)).toMatch(reason)
  })

  it('rejects a database where the keys are stored only in the bank tables, or not at all', () => {
    const verdict = inspectKeyTable(dbWith('CREATE TABLE t (other TEXT PRIMARY KEY)', []), keys)
    expect(verdict.ok ? '' : String(verdict.reason)).toMatch(/no table besides the bank's own/)
  })
})
