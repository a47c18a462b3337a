// The key table. Its PRIMARY KEY is the whole idea of this stage: the database,
// not our code, decides which of two simultaneous requests came first.
import type { Db } from '#bank/db.ts'
import { isUniqueViolation } from '#bank/keyClaims.ts'

export function createKeyStore(db: Db) {
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key        TEXT PRIMARY KEY,
      created_at TEXT NOT NULL
    )
  `)
  // A plain INSERT: not INSERT OR IGNORE, which would skip the row silently
  // and leave us unable to tell a retry from a first request.
  const insert = db.prepare<[string, string]>('INSERT INTO idempotency_keys (key, created_at) VALUES (?, ?)')

  return {
    /** True if this request now owns the key; false if the key was already claimed. */
    claim(key: string): boolean {
      try {
        insert.run(key, new Date().toISOString())
        return true
      } catch (error) {
        // The failed INSERT *is* the answer: someone claimed this key first,
        // even if they did it a microsecond ago in another process.
        if (isUniqueViolation(error)) return false
        throw error
      }
    },
  }
}
