// Finds, in the learner's database file (opened read-only), the column that
// stores the Idempotency-Keys we sent, and the PRIMARY KEY or UNIQUE index
// that makes a key impossible to insert twice.
//
// "Covers the key" means: the key column is in a unique, non-partial index,
// and the index's other columns (if any) are a scope, the same for two keys of
// one client on one route, like stage 5's (client_id, route, key). An index
// such as UNIQUE (key, created_at) would let the same key in twice.
//
// The column may hold the key as it is or inside a composite value, as
// libraries do (`idem:POST:/transfers:<key>`): that is just as unique,
// provided the rest of the value is a scope too (the same for both keys).
import type Database from 'better-sqlite3'
import { BANK_TABLES, quoteName, type Row, readSqliteFile, sqliteColumns, sqliteLayerTables, sqliteRowsHolding } from './layerDatabase.ts'

export type KeyTableVerdict = { ok: true; table: string; column: string; index: string; columns: string[] } | { ok: false; reason: string }

/** `keys`: two keys one client sent to one route, both accepted. */
export function inspectKeyTable(dbPath: string, keys: [string, string]): KeyTableVerdict {
  return readSqliteFile<KeyTableVerdict>(dbPath, (db) => {
    const reasons: string[] = []
    let found = false
    for (const table of sqliteLayerTables(db)) {
      for (const column of sqliteColumns(db, table)) {
        // The key itself, or a value with the key inside (random UUIDs: no accidental match).
        const rows = keys.map((k) => sqliteRowsHolding(db, table, k, column)[0])
        if (!rows[0] || !rows[1]) continue
        found = true
        const [rest0, rest1] = keys.map((k, i) => String(rows[i]![column]).replace(k, '⟨key⟩'))
        if (rest0 !== rest1) {
          reasons.push(
            `${table}.${column} holds the keys inside values that differ besides the key (${rest0} and ${rest1}), so the same key could be stored twice`,
          )
          continue
        }
        const verdict = uniqueIndexOver(db, table, column, rows as [Row, Row])
        if (verdict.ok) return verdict
        reasons.push(verdict.reason)
      }
    }
    if (!found)
      return {
        ok: false,
        reason: `no table besides the bank's own (${[...BANK_TABLES].join(', ')}) holds the keys we sent (${keys.join(', ')}); store each key as sent`,
      }
    return { ok: false, reason: reasons.join('; ') }
  })
}

function uniqueIndexOver(db: Database.Database, table: string, column: string, rows: [Row, Row]): KeyTableVerdict {
  const indexes = db
    .prepare<[], { name: string; unique: number; partial: number }>(`PRAGMA index_list(${quoteName(table)})`)
    .all()
    .filter((i) => i.unique === 1 && i.partial === 0)
  const problems: string[] = []
  for (const index of indexes) {
    // An expression in the index has no column name: it is not a plain column constraint.
    const columns = db
      .prepare<[], { name: string | null }>(`PRAGMA index_info(${quoteName(index.name)})`)
      .all()
      .map((c) => c.name)
    if (!columns.includes(column) || columns.includes(null)) continue
    const names = columns as string[]
    const varying = names.filter((c) => c !== column && rows[0][c] !== rows[1][c])
    if (varying.length === 0) return { ok: true, table, column, index: index.name, columns: names }
    problems.push(
      `the unique index ${index.name} on (${names.join(', ')}) also covers ${varying.join(', ')}, which differs between two requests, so the same key could be inserted twice`,
    )
  }
  if (problems.length) return { ok: false, reason: `${table}.${column} holds the keys, but ${problems.join('; ')}` }
  return {
    ok: false,
    reason: `${table}.${column} holds the keys, but no PRIMARY KEY or UNIQUE constraint covers it: nothing stops a second INSERT of the same key`,
  }
}
