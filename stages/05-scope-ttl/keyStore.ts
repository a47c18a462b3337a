// The key table of stage 4, about to be scoped and given a retention period.
//
// Scope: a key means something only to the client that chose it, on the route
// it was sent to. Today the PRIMARY KEY is the key string alone, so a client
// that happens to pick the same string as another (an order number, say) lands
// on the other's row: it is told 409 or 422 about a request it never made, or
// is handed the other's stored response.
//
// Retention: today a key is remembered forever, so the table only grows. It
// must be remembered for `ttlMs` after its FIRST request (not its last: a
// client that keeps retrying must not keep a key alive forever), then treated
// as new, and the expired rows purged.
import { randomUUID } from 'node:crypto'
import type { Db } from '#bank/db.ts'
import type { Outcome } from '#bank/layer.ts'
import { ClaimLostError, isUniqueViolation } from '#bank/keyClaims.ts'

export type Scope = { clientId: string; route: string; key: string }

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

const REPLAYED_HEADERS = ['Content-Type', 'Location']

// TODO (retention): destructure ttlMs too and use it below.
export function createKeyStore(db: Db, { leaseMs }: { leaseMs: number; ttlMs: number }) {
  // TODO (scope): add `client_id TEXT NOT NULL` and `route TEXT NOT NULL` and
  // make the primary key `PRIMARY KEY (client_id, route, key)`.
  // TODO (retention): add `expires_at INTEGER NOT NULL` (ms since the epoch:
  // first request + ttlMs, never extended), with an index on it for the purge.
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key              TEXT PRIMARY KEY,
      fingerprint      TEXT NOT NULL,
      status           TEXT NOT NULL CHECK (status IN ('in_progress', 'completed')),
      owner            TEXT,
      lease_until      INTEGER,
      response_status  INTEGER,
      response_headers TEXT,
      response_body    TEXT,
      created_at       TEXT NOT NULL
    )
  `)
  // TODO (scope): every statement finds its row by all three parts of the scope.
  const where = 'key = ?'
  const insert = db.prepare<[string, string, string, number, string]>(
    `INSERT INTO idempotency_keys (key, fingerprint, status, owner, lease_until, created_at)
     VALUES (?, ?, 'in_progress', ?, ?, ?)`,
  )
  const find = db.prepare<[string], Row>(
    `SELECT fingerprint, status, owner, lease_until AS leaseUntil, response_status AS responseStatus,
            response_headers AS responseHeaders, response_body AS responseBody
     FROM idempotency_keys WHERE ${where}`,
  )
  const takeOver = db.prepare<[string, number, string, string, number]>(
    `UPDATE idempotency_keys SET owner = ?, lease_until = ?
     WHERE ${where} AND owner = ? AND status = 'in_progress' AND lease_until <= ?`,
  )
  const complete = db.prepare<[number, string, string, string, string]>(
    `UPDATE idempotency_keys
     SET status = 'completed', owner = NULL, lease_until = NULL,
         response_status = ?, response_headers = ?, response_body = ?
     WHERE ${where} AND owner = ? AND status = 'in_progress'`,
  )
  const release = db.prepare<[string, string]>(
    `DELETE FROM idempotency_keys WHERE ${where} AND owner = ? AND status = 'in_progress'`,
  )
  // TODO (retention): a purge statement that deletes the expired rows no
  // request can still be working under (completed, or in progress with the
  // lease run out too), run lazily from claim() at most once per interval.

  return {
    claim({ key }: Scope, fingerprint: string): Claim {
      const owner = randomUUID()
      for (;;) {
        const now = Date.now()
        // TODO (retention): purge here now and then.
        try {
          // TODO (retention): store now + ttlMs as expires_at.
          insert.run(key, fingerprint, owner, now + leaseMs, new Date(now).toISOString())
          return { kind: 'claimed', owner }
        } catch (error) {
          if (!isUniqueViolation(error)) throw error
        }
        const row = find.get(key)
        if (!row) continue
        // TODO (retention): an expired row is forgotten: delete it and `continue`,
        // so this request is claimed as a new one.
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

    complete({ key }: Scope, owner: string, response: Outcome): void {
      const headers = Object.fromEntries(REPLAYED_HEADERS.filter((h) => h in response.headers).map((h) => [h, response.headers[h]]))
      const changes = complete.run(response.status, JSON.stringify(headers), response.body, key, owner).changes
      if (changes !== 1) throw new ClaimLostError(`lost the claim on ${key}`)
    },

    release({ key }: Scope, owner: string): void {
      release.run(key, owner)
    },
  }
}
