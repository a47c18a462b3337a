// The key table, two-phase: a claim is `in_progress` until the transfer
// commits, and only then `completed`.
//
// A claim belongs to one request (its `owner` token) for a limited time (its
// lease). If the server dies mid-transfer, the lease runs out and a retry may
// take the claim over. And because a slow request may still be alive when that
// happens, completing requires still being the owner, checked inside the
// transaction that moves the money.
import { randomUUID } from 'node:crypto'
import type { Db } from '#bank/db.ts'
import { ClaimLostError, isUniqueViolation } from '#bank/keyClaims.ts'

export type Claim =
  | { kind: 'claimed'; owner: string }
  | { kind: 'mismatch' }
  | { kind: 'in-flight'; retryAfterMs: number }
  | { kind: 'completed' }

type Row = { fingerprint: string; status: 'in_progress' | 'completed'; owner: string | null; leaseUntil: number | null }

export function createKeyStore(db: Db, leaseMs: number) {
  db.exec(`
    CREATE TABLE IF NOT EXISTS idempotency_keys (
      key         TEXT PRIMARY KEY,
      fingerprint TEXT NOT NULL,
      status      TEXT NOT NULL CHECK (status IN ('in_progress', 'completed')),
      owner       TEXT,     -- the request holding an in_progress claim
      lease_until INTEGER,  -- ms since the epoch; after it a retry may take over
      created_at  TEXT NOT NULL
    )
  `)
  const insert = db.prepare<[string, string, string, number, string]>(
    `INSERT INTO idempotency_keys (key, fingerprint, status, owner, lease_until, created_at)
     VALUES (?, ?, 'in_progress', ?, ?, ?)`,
  )
  const find = db.prepare<[string], Row>(
    'SELECT fingerprint, status, owner, lease_until AS leaseUntil FROM idempotency_keys WHERE key = ?',
  )
  // Compare-and-set: only one of several retries can take over a given expired claim.
  const takeOver = db.prepare<[string, number, string, string, number]>(
    `UPDATE idempotency_keys SET owner = ?, lease_until = ?
     WHERE key = ? AND owner = ? AND status = 'in_progress' AND lease_until <= ?`,
  )
  const complete = db.prepare<[string, string]>(
    `UPDATE idempotency_keys SET status = 'completed', owner = NULL, lease_until = NULL
     WHERE key = ? AND owner = ? AND status = 'in_progress'`,
  )
  const release = db.prepare<[string, string]>(
    "DELETE FROM idempotency_keys WHERE key = ? AND owner = ? AND status = 'in_progress'",
  )

  return {
    /** Phase one, committed on its own so that every process sees it at once. */
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
        if (!row) continue // released between our INSERT and SELECT: try to claim again
        // 422 before 409: a different body is wrong whether or not the first is done.
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed') return { kind: 'completed' }
        if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }
        // The holder's lease ran out (it crashed, or it is very slow): take over.
        if (takeOver.run(owner, now + leaseMs, key, row.owner!, now).changes === 1) return { kind: 'claimed', owner }
        // Another retry took it over first; look again.
      }
    },

    /** Phase two. Call inside the money transaction: throws (and so rolls the money back) if the claim was lost. */
    complete(key: string, owner: string): void {
      if (complete.run(key, owner).changes !== 1) throw new ClaimLostError(`lost the claim on ${key}`)
    },

    /** Gives the key back after a failure that moved no money, so a retry runs again. */
    release(key: string, owner: string): void {
      release.run(key, owner)
    },
  }
}
