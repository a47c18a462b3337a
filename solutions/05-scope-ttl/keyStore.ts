// The key table of stage 4, scoped and with a retention period.
//
// Scope: a key means something only to the client that chose it, on the route
// it was sent to, so the primary key is (client, route, key). Another client
// that happens to pick the same string (an order number, say) gets its own row
// and never learns that ours exists.
//
// Retention: a key is remembered for `ttlMs` after its FIRST request, not its
// last: a client that keeps retrying must not keep a key alive forever. After
// that the same key is a new request, so the TTL must comfortably exceed how
// long clients keep retrying (see CONTRACT.md). Expired rows are purged.
import { randomUUID } from 'node:crypto'
import type { Db } from '#bank/db.ts'
import type { Outcome } from '#bank/layer.ts'
import { ClaimLostError } from '#bank/keyClaims.ts'

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
  expiresAt: number
  responseStatus: number | null
  responseHeaders: string | null
  responseBody: string | null
}

const REPLAYED_HEADERS = ['Content-Type', 'Location']

export function createKeyStore(db: Db, { leaseMs, ttlMs }: { leaseMs: number; ttlMs: number }) {
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      client_id        TEXT NOT NULL,
      route            TEXT NOT NULL,  -- method and path, e.g. 'POST /transfers'
      key              TEXT NOT NULL,
      fingerprint      TEXT NOT NULL,
      status           TEXT NOT NULL CHECK (status IN ('in_progress', 'completed')),
      owner            TEXT,
      lease_until      INTEGER,
      expires_at       INTEGER NOT NULL,  -- first request + TTL; never extended
      response_status  INTEGER,
      response_headers TEXT,
      response_body    TEXT,
      created_at       TEXT NOT NULL,
      PRIMARY KEY (client_id, route, key)
    );
    CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);
  `)
  const where = 'client_id = ? AND route = ? AND key = ?'
  // The PRIMARY KEY still decides who executes; ON CONFLICT only says how the
  // loser hears it: no row changed, instead of an exception (see claim()).
  const insert = db.prepare<[string, string, string, string, string, number, number, string]>(
    `INSERT INTO idempotency_keys (client_id, route, key, fingerprint, status, owner, lease_until, expires_at, created_at)
     VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?, ?)
     ON CONFLICT (client_id, route, key) DO NOTHING`,
  )
  const find = db.prepare<[string, string, string], Row>(
    `SELECT fingerprint, status, owner, lease_until AS leaseUntil, expires_at AS expiresAt,
            response_status AS responseStatus, response_headers AS responseHeaders, response_body AS responseBody
     FROM idempotency_keys WHERE ${where}`,
  )
  const takeOver = db.prepare<[string, number, string, string, string, string, number]>(
    `UPDATE idempotency_keys SET owner = ?, lease_until = ?
     WHERE ${where} AND owner = ? AND status = 'in_progress' AND lease_until <= ?`,
  )
  const complete = db.prepare<[number, string, string, string, string, string, string]>(
    `UPDATE idempotency_keys
     SET status = 'completed', owner = NULL, lease_until = NULL,
         response_status = ?, response_headers = ?, response_body = ?
     WHERE ${where} AND owner = ? AND status = 'in_progress'`,
  )
  const release = db.prepare<[string, string, string, string]>(
    `DELETE FROM idempotency_keys WHERE ${where} AND owner = ? AND status = 'in_progress'`,
  )
  // An expired row goes only once no request can still be working under it:
  // completed, or in progress with its lease run out too.
  const purge = db.prepare<[number, number]>(
    `DELETE FROM idempotency_keys
     WHERE expires_at <= ? AND (status = 'completed' OR lease_until <= ?)`,
  )
  // Purging on every request would add a write to each; once per interval keeps
  // the table bounded (at most one interval's worth of expired rows linger).
  const purgeEveryMs = Math.max(1, Math.min(ttlMs, 60_000))
  let lastPurge = 0

  return {
    claim({ clientId, route, key }: Scope, fingerprint: string): Claim {
      const owner = randomUUID()
      for (;;) {
        const now = Date.now()
        if (now - lastPurge >= purgeEveryMs) {
          lastPurge = now
          purge.run(now, now)
        }
        // One INSERT decides: it adds the row, or the key's PRIMARY KEY makes
        // it a no-op. Stage 1 catches the constraint's exception instead; here
        // a retry of a finished request is the common case, and building,
        // throwing and catching a SqliteError for each one costs more than
        // the rest of its answer.
        if (insert.run(clientId, route, key, fingerprint, owner, now + leaseMs, now + ttlMs, new Date(now).toISOString()).changes === 1)
          return { kind: 'claimed', owner }
        const row = find.get(clientId, route, key)
        // Gone between our INSERT and this read (released after a 5xx, or
        // purged): the key is free again, so go round and claim it.
        if (!row) continue
        if (row.expiresAt <= now && (row.status === 'completed' || row.leaseUntil! <= now)) {
          // Expired: forget it and treat this request as new.
          purge.run(now, now)
          continue
        }
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed')
          return {
            kind: 'completed',
            response: { status: row.responseStatus!, headers: JSON.parse(row.responseHeaders!), body: row.responseBody! },
          }
        if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }
        if (takeOver.run(owner, now + leaseMs, clientId, route, key, row.owner!, now).changes === 1)
          return { kind: 'claimed', owner }
      }
    },

    complete({ clientId, route, key }: Scope, owner: string, response: Outcome): void {
      const headers = Object.fromEntries(REPLAYED_HEADERS.filter((h) => h in response.headers).map((h) => [h, response.headers[h]]))
      const changes = complete.run(response.status, JSON.stringify(headers), response.body, clientId, route, key, owner).changes
      if (changes !== 1) throw new ClaimLostError(`lost the claim on ${key}`)
    },

    release({ clientId, route, key }: Scope, owner: string): void {
      release.run(clientId, route, key, owner)
    },
  }
}
