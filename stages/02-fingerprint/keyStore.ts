// The key table, now with the fingerprint of the request that claimed each key.
import type { Db } from '#bank/db.ts'
import { isUniqueViolation } from '#bank/keyClaims.ts'

/** What claim() will return once it knows fingerprints. */
export type Claim = { kind: 'claimed' } | { kind: 'duplicate'; fingerprint: string }

export function createKeyStore(db: Db) {
  // TODO 1: add a `fingerprint TEXT NOT NULL` column. (After changing the
  // table, start `npm run serve -- 2 --fresh`.)
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key        TEXT PRIMARY KEY,
      created_at TEXT NOT NULL
    )
  `)
  // TODO 2: insert the fingerprint with the key, and prepare a SELECT of the
  // fingerprint stored for a key.
  const insert = db.prepare<[string, string]>('INSERT INTO idempotency_keys (key, created_at) VALUES (?, ?)')

  return {
    // TODO 3: make this claim(key, fingerprint): Claim. On success return
    // { kind: 'claimed' }. On a unique violation, read the fingerprint of the
    // request that claimed the key first and return { kind: 'duplicate',
    // fingerprint }: the layer decides what a different one means. (Rows are
    // never deleted at this stage, so the winner's row is there.)
    claim(key: string): boolean {
      try {
        insert.run(key, new Date().toISOString())
        return true
      } catch (error) {
        if (isUniqueViolation(error)) return false
        throw error
      }
    },
  }
}
