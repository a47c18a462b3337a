// The key table, now with the fingerprint of the request that claimed each key.
import type { Db } from '#bank/db.ts'
import { isUniqueViolation } from '#bank/keyClaims.ts'

export type Claim = { kind: 'claimed' } | { kind: 'duplicate'; fingerprint: string }

export function createKeyStore(db: Db) {
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key         TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      created_at  TEXT NOT NULL
    )
  `)
  const insert = db.prepare<[string, string, string]>(
    'INSERT INTO idempotency_keys (key, fingerprint, created_at) VALUES (?, ?, ?)',
  )
  const find = db.prepare<[string], { fingerprint: string }>('SELECT fingerprint FROM idempotency_keys WHERE key = ?')

  return {
    claim(key: string, fingerprint: string): Claim {
      try {
        insert.run(key, fingerprint, new Date().toISOString())
        return { kind: 'claimed' }
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
        // Rows are never deleted at this stage, so the winner's row is there.
        return { kind: 'duplicate', fingerprint: find.get(key)!.fingerprint }
      }
    },
  }
}
