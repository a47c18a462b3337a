// The key table. Its PRIMARY KEY is the whole idea of this stage: the database,
// not our code, decides which of two simultaneous requests came first.
import type { Db } from '#bank/db.ts'

export function createKeyStore(db: Db) {
  // TODO 1: make `key` the PRIMARY KEY. Without a constraint, nothing stops a
  // second row with the same key. (After changing the table, start
  // `npm run serve -- 1 --fresh`: CREATE TABLE IF NOT EXISTS does not change
  // a table that already exists.)
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key        TEXT NOT NULL,
      created_at TEXT NOT NULL
    )
  `)
  // TODO 2: prepare the INSERT of (key, created_at) here, once: a plain
  // INSERT. Not INSERT OR IGNORE, which skips the row silently and leaves you
  // unable to tell a retry from a first request.

  return {
    /** True if this request now owns the key; false if the key was already claimed. */
    claim(key: string): boolean {
      // TODO 3: run the INSERT (created_at: new Date().toISOString()).
      //  - it succeeds: this request owns the key, return true;
      //  - it throws and isUniqueViolation(error) (given, import it from
      //    '#bank/keyClaims.ts'): someone claimed the key first, even a
      //    microsecond ago in another process: return false;
      //  - anything else is a real failure: rethrow it.
      // Do not SELECT first to "check": between the SELECT and the INSERT,
      // another request can do the same SELECT. The failed INSERT *is* the answer.
      throw new Error(`keyStore.ts: claim() is not written yet, so the key ${JSON.stringify(key)} cannot be claimed`)
    },
  }
}
