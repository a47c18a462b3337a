// The key table of stage 3, about to store the response: completing a key
// will store the exact outcome the first request answered, in the same
// transaction as the money, so a replay can send it back unchanged.
//
// The table already has the three response columns; nothing writes or reads
// them yet. Your TODOs below do.
import { randomUUID } from 'node:crypto'
import type { Db } from '#bank/db.ts'
import type { Outcome } from '#bank/layer.ts'
import { ClaimLostError, isUniqueViolation } from '#bank/keyClaims.ts'

// TODO (replay): a completed claim carries what to replay:
//   | { kind: 'completed'; response: Outcome }
export type Claim =
  | { kind: 'claimed'; owner: string }
  | { kind: 'mismatch' }
  | { kind: 'in-flight'; retryAfterMs: number }
  | { kind: 'completed' }

// TODO (replay): add responseStatus, responseHeaders and responseBody (each `| null`).
type Row = { fingerprint: string; status: 'in_progress' | 'completed'; owner: string | null; leaseUntil: number | null }

// TODO (allow-list): the headers worth replaying. Content-Type and Location
// describe the stored body; anything else (Date, Set-Cookie, a request id)
// belongs to the exchange that carried it, not to the result:
//   const REPLAYED_HEADERS = ['Content-Type', 'Location']

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
  // TODO (replay): select the response columns too (response_status AS responseStatus, ...).
  const find = db.prepare<[string], Row>(
    'SELECT fingerprint, status, owner, lease_until AS leaseUntil FROM idempotency_keys WHERE key = ?',
  )
  const takeOver = db.prepare<[string, number, string, string, number]>(
    `UPDATE idempotency_keys SET owner = ?, lease_until = ?
     WHERE key = ? AND owner = ? AND status = 'in_progress' AND lease_until <= ?`,
  )
  // TODO (store): set response_status, response_headers and response_body in
  // the same UPDATE that completes the key (they are its first parameters then).
  const complete = db.prepare<[string, string]>(
    `UPDATE idempotency_keys SET status = 'completed', owner = NULL, lease_until = NULL
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
        // TODO (replay): hand back the stored response:
        // { status: row.responseStatus, headers: JSON.parse(row.responseHeaders), body: row.responseBody }
        if (row.status === 'completed') return { kind: 'completed' }
        if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }
        if (takeOver.run(owner, now + leaseMs, key, row.owner!, now).changes === 1) return { kind: 'claimed', owner }
      }
    },

    /** Inside the money transaction: mark completed and store what we are about to answer. */
    complete(key: string, owner: string, _response: Outcome): void {
      // TODO (store): rename _response to response and store it: its status,
      // its body exactly as it will be sent (a string: do not parse and
      // re-serialize it), and as JSON an object of only the REPLAYED_HEADERS it has.
      // Every outcome that reaches here is stored: the 201, and a 402, 403 or
      // 404 too, because executing decided them.
      if (complete.run(key, owner).changes !== 1) throw new ClaimLostError(`lost the claim on ${key}`)
    },

    release(key: string, owner: string): void {
      release.run(key, owner)
    },
  }
}
