// The idempotency layer's side of the bank's database, for the white-box
// checks (`needs: 'database'` or `'sqlite-file'`): the one place that knows
// which tables are the layer's, how to name them in SQL, which rows hold a
// key, and how to lock those rows. The layer's tables and columns are the
// learner's, so nothing here assumes a name.
//
// On SQLite the grader opens the server's file read-only, a connection of its
// own (so it sees only committed state, as another server process would). On
// PostgreSQL it connects to the grade's database, as the instances do
// (LAB_DATABASE_URL).
//
// A row holds a key when one of its columns, read as text, contains the key as
// the client sent it: the whole value, or a part of a composite one as
// libraries store it (`idem:POST:/transfers:<key>`). Each column is searched
// on its own, in SQL, on both stores: SQLite's CAST(c AS TEXT) (a BLOB as its
// bytes), PostgreSQL's c::text (a bytea searched as bytes, as on SQLite). A
// NULL holds nothing. The row as a whole is never searched as one text: on
// PostgreSQL a row's text form quotes its fields, doubling every " and \ (a
// key with one would not be found), and a match could run across two columns.
import Database from 'better-sqlite3'
import pg from 'pg'
import type { BankClient } from '#harness/bankClient.ts'
import { fail } from '../engine/check.ts'
import { phrases } from '#harness/i18n/phrase.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": layerDatabase.<key>).
const say = phrases('layerDatabase', {
  noDatabaseUrl: 'stage 6 runs on PostgreSQL, but the bank was started without LAB_DATABASE_URL',
})

/** The bank's own tables (bank/db.ts, bank/pg/db.ts); every other table belongs to the layer. */
export const BANK_TABLES: ReadonlySet<string> = new Set(['clients', 'accounts', 'ledger'])

/** A table, column or index name as an SQL identifier, on either store. */
export const quoteName = (name: string) => `"${name.replaceAll('"', '""')}"`

export type Row = Record<string, unknown>

/** A row of one of the layer's tables. */
export type LayerRow = { table: string; row: Row }

// SQLite: synchronous, on a read-only connection of our own.

const openSqliteFile = (dbPath: string) => new Database(dbPath, { readonly: true, fileMustExist: true })

/** Runs `read` on a read-only connection to the SQLite file at `dbPath`, closed afterwards. */
export function readSqliteFile<T>(dbPath: string, read: (db: Database.Database) => T): T {
  const db = openSqliteFile(dbPath)
  try {
    return read(db)
  } finally {
    db.close()
  }
}

/** The layer's tables, in the order they were created. */
export function sqliteLayerTables(db: Database.Database): string[] {
  return db
    .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .all()
    .map((t) => t.name)
    .filter((name) => !BANK_TABLES.has(name))
}

export function sqliteColumns(db: Database.Database, table: string): string[] {
  return db
    .prepare<[], { name: string }>(`PRAGMA table_info(${quoteName(table)})`)
    .all()
    .map((c) => c.name)
}

/** The SQL condition that a row of `table` holds the text bound as @text, in one of `columns`. */
const sqliteHolds = (columns: string[]) => columns.map((c) => `instr(CAST(${quoteName(c)} AS TEXT), @text) > 0`).join(' OR ')

/** The rows of `table` holding `text` (in `column` only, when given), in the table's order. */
export function sqliteRowsHolding(db: Database.Database, table: string, text: string, column?: string): Row[] {
  const columns = column === undefined ? sqliteColumns(db, table) : [column]
  return db.prepare<{ text: string }, Row>(`SELECT * FROM ${quoteName(table)} WHERE ${sqliteHolds(columns)}`).all({ text })
}

/**
 * The key's row as committed now: the one row holding `key`, in the first of
 * the layer's tables that has exactly one (a table with several rows holding
 * it, such as a log, names no single state). Undefined when none has.
 */
export function keyRowState(dbPath: string, key: string): LayerRow | undefined {
  return readSqliteFile(dbPath, (db) => {
    for (const table of sqliteLayerTables(db)) {
      const rows = sqliteRowsHolding(db, table, key)
      if (rows.length === 1) return { table, row: rows[0]! }
    }
    return undefined
  })
}

// PostgreSQL: the grade's database, shared by stage 6's instances.

/** A connection to the database of `bank`, which stage 6's instances share: the caller ends it. */
export async function connectToDatabase(bank: BankClient): Promise<pg.Client> {
  const url = bank.server.options.env?.LAB_DATABASE_URL
  if (!url) fail(say('noDatabaseUrl'))
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return client
}

/** The layer's tables: the base tables of the current schema (where unqualified CREATE TABLEs land), the bank's left out. */
export async function postgresLayerTables(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  )
  return rows.map((t) => t.name).filter((name) => !BANK_TABLES.has(name))
}

/** The SQL condition that a row of `table` holds the text bound as $1, in one of its columns. */
async function postgresHolds(client: pg.Client, table: string): Promise<string> {
  const { rows: columns } = await client.query<{ name: string; type: string }>(
    'SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position',
    [table],
  )
  if (columns.length === 0) return 'false'
  return columns
    .map(({ name, type }) => (type === 'bytea' ? `position(convert_to($1, 'UTF8') IN ${quoteName(name)}) > 0` : `strpos(${quoteName(name)}::text, $1) > 0`))
    .join(' OR ')
}

/**
 * In the open transaction of `client`, locks every row of the layer's tables
 * that holds `text` (FOR UPDATE): whoever writes one of them waits for the
 * caller's COMMIT or ROLLBACK. Returns how many rows it locked.
 */
export async function lockRowsHolding(client: pg.Client, text: string): Promise<number> {
  let locked = 0
  for (const table of await postgresLayerTables(client))
    locked += (await client.query(`SELECT 1 FROM ${quoteName(table)} WHERE ${await postgresHolds(client, table)} FOR UPDATE`, [text])).rowCount ?? 0
  return locked
}

/** Backends of this database waiting for a lock (pg_stat_activity, read outside any transaction so it is current). */
export async function lockWaiters(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  )
  return rows[0]!.n
}

// Either store, by the bank's database.

/** The layer's tables in the database of one bank, on whichever store it runs. */
export type LayerStore = {
  /** The layer's tables, in the database's own order. */
  tables(): Promise<string[]>
  /** The rows of `table`: all of them, or those holding `text`. */
  rows(table: string, holding?: string): Promise<Row[]>
  /** How many rows `table` has: all of them, or those holding `text`. */
  count(table: string, holding?: string): Promise<number>
}

/** Runs `use` on the layer's tables of `bank`'s database (PostgreSQL when it has LAB_DATABASE_URL, else its SQLite file), closed afterwards. */
export async function withLayerStore<T>(bank: BankClient, use: (store: LayerStore) => Promise<T>): Promise<T> {
  if (bank.server.options.env?.LAB_DATABASE_URL) {
    const client = await connectToDatabase(bank)
    try {
      return await use(postgresStore(client))
    } finally {
      await client.end()
    }
  }
  const db = openSqliteFile(bank.server.options.dbPath)
  try {
    return await use(sqliteStore(db))
  } finally {
    db.close()
  }
}

function sqliteStore(db: Database.Database): LayerStore {
  return {
    tables: async () => sqliteLayerTables(db),
    rows: async (table, holding) =>
      holding === undefined ? db.prepare<[], Row>(`SELECT * FROM ${quoteName(table)}`).all() : sqliteRowsHolding(db, table, holding),
    count: async (table, holding) =>
      holding === undefined
        ? db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${quoteName(table)}`).get()!.n
        : sqliteRowsHolding(db, table, holding).length,
  }
}

function postgresStore(client: pg.Client): LayerStore {
  const where = async (table: string, holding: string | undefined) => (holding === undefined ? '' : ` WHERE ${await postgresHolds(client, table)}`)
  const params = (holding: string | undefined) => (holding === undefined ? [] : [holding])
  return {
    tables: () => postgresLayerTables(client),
    rows: async (table, holding) => (await client.query<Row>(`SELECT * FROM ${quoteName(table)}${await where(table, holding)}`, params(holding))).rows,
    count: async (table, holding) =>
      (await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${quoteName(table)}${await where(table, holding)}`, params(holding))).rows[0]!.n,
  }
}
