// What the idempotency layer keeps in the bank's database, read by the grader
// itself (white box: checks with `needs: 'database'`). The layer's tables are
// every table but the bank's own; their names and columns are the learner's.
// On SQLite the grader opens the server's file read-only; on PostgreSQL it
// connects to the grade's database, as the instances do (LAB_DATABASE_URL).
import Database from 'better-sqlite3'
import pg from 'pg'
import type { BankClient } from '../../harness/bankClient.ts'
import { fail } from '../check.ts'
import { BANK_TABLES } from './keyTable.ts'

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`

/** A connection to the database of `bank`, which stage 6's instances share: the caller ends it. */
export async function connectToDatabase(bank: BankClient): Promise<pg.Client> {
  const url = bank.server.options.env?.LAB_DATABASE_URL
  if (!url) fail('stage 6 runs on PostgreSQL, but the bank was started without LAB_DATABASE_URL')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  return client
}

/**
 * Rows per table of the layer; with `mentioning`, only the rows in which that
 * text appears (a key as it was sent, in whatever column or composite value
 * holds it).
 */
export async function layerRows(bank: BankClient, mentioning?: string): Promise<Record<string, number>> {
  return bank.server.options.env?.LAB_DATABASE_URL ? postgresRows(bank, mentioning) : sqliteRows(bank.server.options.dbPath, mentioning)
}

export const totalRows = (rows: Record<string, number>) => Object.values(rows).reduce((s, n) => s + n, 0)

export const describeRows = (rows: Record<string, number>) =>
  Object.entries(rows)
    .map(([t, n]) => `${t}: ${n}`)
    .join(', ') || 'no tables'

function sqliteRows(dbPath: string, mentioning: string | undefined): Record<string, number> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all()
      .filter((t) => !BANK_TABLES.has(t.name))
    const count = (table: string) =>
      mentioning === undefined
        ? db.prepare<[], { n: number }>(`SELECT count(*) AS n FROM ${quote(table)}`).get()!.n
        : db
            .prepare<[], Record<string, unknown>>(`SELECT * FROM ${quote(table)}`)
            .all()
            .filter((row) => Object.values(row).some((v) => String(v).includes(mentioning))).length
    return Object.fromEntries(tables.map((t) => [t.name, count(t.name)]))
  } finally {
    db.close()
  }
}

async function postgresRows(bank: BankClient, mentioning: string | undefined): Promise<Record<string, number>> {
  const client = await connectToDatabase(bank)
  try {
    const { rows: tables } = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    )
    const counts: Record<string, number> = {}
    for (const { name } of tables.filter((t) => !BANK_TABLES.has(t.name))) {
      // A row cast to text holds every column's value: the key is found wherever the layer put it.
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${quote(name)} AS r${mentioning === undefined ? '' : ' WHERE strpos(r::text, $1) > 0'}`,
        mentioning === undefined ? [] : [mentioning],
      )
      counts[name] = rows[0]!.n
    }
    return counts
  } finally {
    await client.end()
  }
}

/** Backends of this database waiting for a lock (pg_stat_activity, read outside any transaction so it is current). */
export async function lockWaiters(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
  )
  return rows[0]!.n
}

/**
 * In the open transaction of `client`, locks every row of the layer's tables
 * in which `text` appears (FOR UPDATE): whoever writes one of them waits for
 * the caller's COMMIT or ROLLBACK. Returns how many rows it locked.
 */
export async function lockRowsMentioning(client: pg.Client, text: string): Promise<number> {
  const { rows: tables } = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  )
  let locked = 0
  for (const { name } of tables.filter((t) => !BANK_TABLES.has(t.name)))
    locked += (await client.query(`SELECT 1 FROM ${quote(name)} AS r WHERE strpos(r::text, $1) > 0 FOR UPDATE`, [text])).rowCount ?? 0
  return locked
}
