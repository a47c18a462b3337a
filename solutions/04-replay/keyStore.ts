// The key table of stage 3, plus the response: completing a key now stores
// the exact outcome the first request answered, in the same transaction as
// the money, so a replay can send it back unchanged.
import { randomUUID } from 'node:crypto'
import type { Db } from '#bank/db.ts'
import type { Outcome } from '#bank/layer.ts'
import { ClaimLostError, isUniqueViolation } from '#bank/keyClaims.ts'

export type Claim =
  | { kind: 'claimed'; owner: string }
  | { kind: 'mismatch' }
  | { kind: 'in-flight'; retryAfterMs: number }
  | { kind: 'completed'; response: Outcome }

type Row = {
  fingerprint: string
  status: 'in_progress' | 'completed'
  owner: string | null
  leaseUntil: number | null
  responseStatus: number | null
  responseHeaders: string | null
  responseBody: string | null
}

/**
 * Headers worth replaying. Content-Type and Location describe the stored
 * body; anything else (Date, Set-Cookie, a request id) belongs to the
 * exchange that carried it, not to the result.
 */
const REPLAYED_HEADERS = ['Content-Type', 'Location']

export function createKeyStore(db: Db, leaseMs: number) {
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key              TEXT PRIMARY KEY,
      fingerprint      TEXT NOT NULL,
      status           TEXT NOT NULL CHECK (status IN ('in_progress', 'completed')),
      owner            TEXT,
      lease_until      INTEGER,
      response_status  INTEGER,  -- the first response, stored on completion
      response_headers TEXT,     -- JSON object of the allow-listed headers
      response_body    TEXT,     -- the exact bytes sent
      created_at       TEXT NOT NULL
    )
  `)
  const insert = db.prepare<[string, string, string, number, string]>(
    `INSERT INTO idempotency_keys (key, fingerprint, status, owner, lease_until, created_at)
     VALUES (?, ?, 'in_progress', ?, ?, ?)`,
  )
  const find = db.prepare<[string], Row>(
    `SELECT fingerprint, status, owner, lease_until AS leaseUntil, response_status AS responseStatus,
            response_headers AS responseHeaders, response_body AS responseBody
     FROM idempotency_keys WHERE key = ?`,
  )
  const takeOver = db.prepare<[string, number, string, string, number]>(
    `UPDATE idempotency_keys SET owner = ?, lease_until = ?
     WHERE key = ? AND owner = ? AND status = 'in_progress' AND lease_until <= ?`,
  )
  const complete = db.prepare<[number, string, string, string, string]>(
    `UPDATE idempotency_keys
     SET status = 'completed', owner = NULL, lease_until = NULL,
         response_status = ?, response_headers = ?, response_body = ?
     WHERE key = ? AND owner = ? AND status = 'in_progress'`,
  )
  const release = db.prepare<[string, string]>(
    "DELETE FROM idempotency_keys WHERE key = ? AND owner = ? AND status = 'in_progress'",
  )

  return {
    claim(key: string, fingerprint: string): Claim {
      const owner = randomUUID()
      for (;;) {
        const now = Date.now()
        try {
          insert.run(key, fingerprint, owner, now + leaseMs, new Date(now).toISOString())
          return { kind: 'claimed', owner }
        } catch (error) {
          if (!isUniqueViolation(error)) throw error
        }
        const row = find.get(key)
        if (!row) continue
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed')
          return {
            kind: 'completed',
            response: { status: row.responseStatus!, headers: JSON.parse(row.responseHeaders!), body: row.responseBody! },
          }
        if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }
        if (takeOver.run(owner, now + leaseMs, key, row.owner!, now).changes === 1) return { kind: 'claimed', owner }
      }
    },

    /** Inside the money transaction: mark completed and store what we are about to answer. */
    complete(key: string, owner: string, response: Outcome): void {
      const headers = Object.fromEntries(REPLAYED_HEADERS.filter((h) => h in response.headers).map((h) => [h, response.headers[h]]))
      const changes = complete.run(response.status, JSON.stringify(headers), response.body, key, owner).changes
      if (changes !== 1) throw new ClaimLostError(`lost the claim on ${key}`)
    },

    release(key: string, owner: string): void {
      release.run(key, owner)
    },
  }
}
