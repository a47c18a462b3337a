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
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import type Database from 'better-sqlite3'
import { BANK_TABLES, quoteName, type Row, readSqliteFile, sqliteColumns, sqliteLayerTables, sqliteRowsHolding } from './layerDatabase.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": keyTable.<key>).
const say = phrases('keyTable', {
  differBesides: '{column} holds the keys inside values that differ besides the key ({first} and {second}), so the same key could be stored twice',
  noTable: "no table besides the bank's own ({tables}) holds the keys we sent ({keys}); store each key as sent",
  indexCoversMore: 'the unique index {index} on ({columns}) also covers {varying}, which differs between two requests, so the same key could be inserted twice',
  holdsBut: '{column} holds the keys, but {problems}',
  noConstraint: '{column} holds the keys, but no PRIMARY KEY or UNIQUE constraint covers it: nothing stops a second INSERT of the same key',
})

export type KeyTableVerdict = { ok: true; table: string; column: string; index: string; columns: string[] } | { ok: false; reason: Line }

/** `keys`: two keys one client sent to one route, both accepted. */
export function inspectKeyTable(dbPath: string, keys: [string, string]): KeyTableVerdict {
  return readSqliteFile<KeyTableVerdict>(dbPath, (db) => {
    const reasons: Line[] = []
    let found = false
    for (const table of sqliteLayerTables(db)) {
      for (const column of sqliteColumns(db, table)) {
        // The key itself, or a value with the key inside (random UUIDs: no accidental match).
        const rows = keys.map((k) => sqliteRowsHolding(db, table, k, column)[0])
        if (!rows[0] || !rows[1]) continue
        found = true
        const [rest0, rest1] = keys.map((k, i) => String(rows[i]![column]).replace(k, '⟨key⟩'))
        if (rest0 !== rest1) {
          reasons.push(say('differBesides', { column: `${table}.${column}`, first: rest0!, second: rest1! }))
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
        reason: say('noTable', { tables: [...BANK_TABLES].join(', '), keys: keys.join(', ') }),
      }
    return { ok: false, reason: listOf(reasons, 'semicolon') }
  })
}

function uniqueIndexOver(db: Database.Database, table: string, column: string, rows: [Row, Row]): KeyTableVerdict {
  const indexes = db
    .prepare<[], { name: string; unique: number; partial: number }>(`PRAGMA index_list(${quoteName(table)})`)
    .all()
    .filter((i) => i.unique === 1 && i.partial === 0)
  const problems: Phrase[] = []
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
    problems.push(say('indexCoversMore', { index: index.name, columns: names.join(', '), varying: varying.join(', ') }))
  }
  if (problems.length) return { ok: false, reason: say('holdsBut', { column: `${table}.${column}`, problems: listOf(problems, 'semicolon') }) }
  return {
    ok: false,
    reason: say('noConstraint', { column: `${table}.${column}` }),
  }
}
