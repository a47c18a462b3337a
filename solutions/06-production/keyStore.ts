// Stage 5's key table, on PostgreSQL, shared by every instance of the bank.
//
// Three things change with a database server and several instances:
// - The claim is one statement in its own (autocommit) transaction:
//   INSERT … ON CONFLICT DO NOTHING RETURNING. It never raises 23505, so no
//   transaction is left aborted (25P02), and it commits at once, so the other
//   instances see the claim before the slow core call starts.
// - Every lease and expiry is decided by the database's clock, now(): the
//   instances' clocks disagree (a host 30 s ahead would take over a live
//   lease), the database has one clock for all of them.
// - Completion runs on the money's transaction (`tx`), with the owner check,
//   so the response row and the transfer commit or roll back together.
import { randomUUID } from 'node:crypto'
import { ClaimLostError } from '#bank/keyClaims.ts'
import type { Outcome, Pool, Tx } from '#bank/layer.ts'
import { withSchemaLock } from '#bank/pg/db.ts'

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
  /** Decided by now() in the same statement that read the row. */
  leased: boolean
  expired: boolean
  leftMs: number
  responseStatus: number | null
  responseHeaders: string | null
  responseBody: string | null
}

const REPLAYED_HEADERS = ['Content-Type', 'Location']
const WHERE = 'client_id = $1 AND route = $2 AND key = $3'
/** Rows gone once no request can still work under them: expired, and completed or with the lease run out. */
const DEAD = `expires_at <= now() AND (status = 'completed' OR lease_until <= now())`
/** At most this many rows per purge statement: a short transaction, never a long lock on the table. */
const PURGE_BATCH = 500

export async function createKeyStore(pool: Pool, { leaseMs, ttlMs }: { leaseMs: number; ttlMs: number }) {
  await withSchemaLock(
    pool,
    `CREATE TABLE IF NOT EXISTS idempotency_keys (
       client_id        TEXT NOT NULL,
       route            TEXT NOT NULL,
       key              TEXT NOT NULL,
       fingerprint      TEXT NOT NULL,
       status           TEXT NOT NULL CHECK (status IN ('in_progress', 'completed')),
       owner            TEXT,
       lease_until      TIMESTAMPTZ,
       expires_at       TIMESTAMPTZ NOT NULL,  -- first request + TTL, by the database's clock
       response_status  INTEGER,
       response_headers TEXT,
       response_body    TEXT,
       created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
       PRIMARY KEY (client_id, route, key)
     );
     CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (expires_at);`,
  )
  const ms = (n: number) => `make_interval(secs => ${n / 1000})`
  const purgeEveryMs = Math.max(1, Math.min(ttlMs, 60_000))
  let lastPurge = 0

  /** Deletes dead rows in batches of PURGE_BATCH, each its own short statement. */
  async function purge(): Promise<void> {
    for (;;) {
      const { rowCount } = await pool.query(
        `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys WHERE ${DEAD} LIMIT ${PURGE_BATCH})`,
      )
      if ((rowCount ?? 0) < PURGE_BATCH) return
    }
  }

  return {
    async claim({ clientId, route, key }: Scope, fingerprint: string): Promise<Claim> {
      const owner = randomUUID()
      // An instance's timer only says how often to purge; which rows go is decided by now().
      if (Date.now() - lastPurge >= purgeEveryMs) {
        lastPurge = Date.now()
        await purge()
      }
      for (;;) {
        const inserted = await pool.query(
          `INSERT INTO idempotency_keys (client_id, route, key, fingerprint, status, owner, lease_until, expires_at)
           VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + ${ms(leaseMs)}, now() + ${ms(ttlMs)})
           ON CONFLICT (client_id, route, key) DO NOTHING RETURNING owner`,
          [clientId, route, key, fingerprint, owner],
        )
        if (inserted.rowCount === 1) return { kind: 'claimed', owner }

        const { rows } = await pool.query<Row>(
          `SELECT fingerprint, status, owner, lease_until > now() AS leased, expires_at <= now() AS expired,
                  ceil(extract(epoch FROM lease_until - now()) * 1000)::int AS "leftMs",
                  response_status AS "responseStatus", response_headers AS "responseHeaders", response_body AS "responseBody"
           FROM idempotency_keys WHERE ${WHERE}`,
          [clientId, route, key],
        )
        const row = rows[0]
        if (!row) continue // purged between our INSERT and this read: try again
        if (row.expired && (row.status === 'completed' || !row.leased)) {
          // Expired: forget it and treat this request as new.
          await pool.query(`DELETE FROM idempotency_keys WHERE ${WHERE} AND ${DEAD}`, [clientId, route, key])
          continue
        }
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed')
          return {
            kind: 'completed',
            response: { status: row.responseStatus!, headers: JSON.parse(row.responseHeaders!), body: row.responseBody! },
          }
        if (row.leased) return { kind: 'in-flight', retryAfterMs: row.leftMs }
        // The holder's lease ran out (it crashed, or is too slow): take over, if nobody else just did.
        const taken = await pool.query(
          `UPDATE idempotency_keys SET owner = $4, lease_until = now() + ${ms(leaseMs)}
           WHERE ${WHERE} AND owner = $5 AND status = 'in_progress' AND lease_until <= now()`,
          [clientId, route, key, owner, row.owner],
        )
        if (taken.rowCount === 1) return { kind: 'claimed', owner }
      }
    },

    /** On the money's transaction: if another request took the key over, this throws and the money rolls back. */
    async complete(tx: Tx, { clientId, route, key }: Scope, owner: string, response: Outcome): Promise<void> {
      const headers = Object.fromEntries(REPLAYED_HEADERS.filter((h) => h in response.headers).map((h) => [h, response.headers[h]]))
      const { rowCount } = await tx.query(
        `UPDATE idempotency_keys
         SET status = 'completed', owner = NULL, lease_until = NULL,
             response_status = $5, response_headers = $6, response_body = $7
         WHERE ${WHERE} AND owner = $4 AND status = 'in_progress'`,
        [clientId, route, key, owner, response.status, JSON.stringify(headers), response.body],
      )
      if (rowCount !== 1) throw new ClaimLostError(`lost the claim on ${key}`)
    },

    async release({ clientId, route, key }: Scope, owner: string): Promise<void> {
      await pool.query(`DELETE FROM idempotency_keys WHERE ${WHERE} AND owner = $4 AND status = 'in_progress'`, [clientId, route, key, owner])
    },
  }
}
