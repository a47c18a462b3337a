// The key table, about to become two-phase: a claim is `in_progress` until
// the transfer commits, and only then `completed`.
//
// The table already has the columns (status, owner, lease_until) and the
// claim already writes an `in_progress` row. But nothing reads them yet: any
// row found counts as done, nothing ever completes a row, and nothing gives a
// key back. Your TODOs below make the two phases real.
//
// A claim belongs to one request (its `owner` token) for a limited time (its
// lease). If the server dies mid-transfer, the lease runs out and a retry may
// take the claim over. And because a slow request may still be alive when that
// happens, completing requires still being the owner, checked inside the
// transaction that moves the money.
import { randomUUID } from 'node:crypto'
import type { Db } from '#bank/db.ts'
import { isUniqueViolation } from '#bank/keyClaims.ts'

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
  // TODO (statements): prepare the three writes of the two phases, each a
  // compare-and-set that changes at most one row:
  //   takeOver: set a new owner and lease_until, WHERE the key is still
  //             in_progress, still held by the owner you saw, and its lease has run out;
  //   complete: status 'completed' (owner and lease_until NULL), WHERE the key
  //             is in_progress AND held by this owner;
  //   release:  DELETE the row, WHERE the key is in_progress AND held by this owner.

  return {
    /** Phase one, committed on its own so that every process sees it at once. */
    claim(key: string, fingerprint: string): Claim {
      const owner = randomUUID()
      const now = Date.now()
      try {
        insert.run(key, fingerprint, owner, now + leaseMs, new Date(now).toISOString())
        return { kind: 'claimed', owner }
      } catch (error) {
        if (!isUniqueViolation(error)) throw error
      }
      const row = find.get(key)!
      // 422 before 409: a different body is wrong whether or not the first is done.
      if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
      // TODO (phase one): only a `completed` row is done. An `in_progress` row
      // whose lease has not run out is in flight: return
      // { kind: 'in-flight', retryAfterMs: row.leaseUntil - now }. One whose
      // lease ran out belongs to a request that crashed (or is very slow):
      // take it over with `takeOver` and return { kind: 'claimed', owner }.
      // Two things can happen between your INSERT and your SELECT, so loop:
      // the row may be gone (released: try to INSERT again), and another
      // retry may win the takeover (changes === 0: look at the row again).
      return { kind: 'completed' }
    },

    /** Phase two. Call inside the money transaction: throws (and so rolls the money back) if the claim was lost. */
    complete(_key: string, _owner: string): void {
      // TODO (phase two): run `complete`; if it changed no row, this request
      // no longer owns the key (its lease expired and a retry took it over):
      // throw new ClaimLostError(...) (from '#bank/keyClaims.ts'), so the money
      // it was about to commit rolls back.
    },

    /** Gives the key back after a failure that moved no money, so a retry runs again. */
    release(_key: string, _owner: string): void {
      // TODO (release): run `release` (only our own in_progress claim, never a completed key).
    },
  }
}
