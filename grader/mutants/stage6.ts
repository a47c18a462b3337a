// Stage 6 mutants: the classic mistakes of a first PostgreSQL port. Each is one
// plausible edit of the reference solution, and each fails the check aimed at
// it on every seed.
import type { Mutant } from './mutant.ts'

const claimValues = "VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + ${ms(leaseMs)}, now() + ${ms(ttlMs)})"
const execute = 'outcome = await op.execute((result, tx) => keys.complete(tx, scope, claim.owner, result))'
const insertColumns = 'INSERT INTO idempotency_keys (client_id, route, key, fingerprint, status, owner, lease_until, expires_at)'
/** The solution's claim: the INSERT, up to the read that follows a conflict (endOfRead is where that read ends). */
const insertThenRead = `        const inserted = await pool.query(
          \`${insertColumns}
           ${claimValues}
           ON CONFLICT (client_id, route, key) DO NOTHING RETURNING owner\`,
          [clientId, route, key, fingerprint, owner],
        )
        if (inserted.rowCount === 1) return { kind: 'claimed', owner }

        const { rows } = await pool.query<Row>(`
const endOfRead = `FROM idempotency_keys WHERE \${WHERE}\`,
          [clientId, route, key],
        )
        const row = rows[0]`

export const stage6Mutants: Mutant[] = [
  {
    id: 'instance-clock',
    stage: 6,
    title: "Leases and expiry from the instance's Date.now(): an instance whose clock runs ahead takes over a live lease",
    mustFail: 'skewed-clocks',
    edits: [
      {
        file: 'keyStore.ts',
        find: claimValues,
        replace: "VALUES ($1, $2, $3, $4, 'in_progress', $5, to_timestamp(${(Date.now() + leaseMs) / 1000}), to_timestamp(${(Date.now() + ttlMs) / 1000}))",
      },
    ],
  },
  {
    id: 'retry-after-by-instance-clock',
    stage: 6,
    title:
      "Leases by the database, but the lease left for Retry-After from the instance's Date.now(): an instance 30 s off tells clients to come back at the wrong time",
    mustFail: 'skewed-clocks',
    edits: [
      {
        file: 'keyStore.ts',
        find: 'ceil(extract(epoch FROM lease_until - now()) * 1000)::int AS "leftMs"',
        replace: '(ceil(extract(epoch FROM lease_until) * 1000) - ${Date.now()})::int AS "leftMs"',
      },
    ],
  },
  {
    id: 'expiry-by-instance-clock',
    stage: 6,
    title:
      "Leases by the database, but expiry judged by the instance's Date.now(): to an instance 30 s ahead, a key with a 25 s TTL is gone at once, and its retry executes again",
    mustFail: 'skewed-clocks',
    edits: [
      { file: 'keyStore.ts', find: 'expires_at <= now() AS expired', replace: 'expires_at <= to_timestamp(${Date.now() / 1000}) AS expired' },
      { file: 'keyStore.ts', find: 'DELETE FROM idempotency_keys WHERE ${WHERE} AND ${DEAD}', replace: 'DELETE FROM idempotency_keys WHERE ${WHERE}' },
    ],
  },
  {
    id: 'transaction-across-core',
    stage: 6,
    title: 'A transaction (and its pooled connection) held open across the core call: a small pool starves, duplicates wait',
    mustFail: 'small-pool-answers-duplicates',
    edits: [
      {
        file: 'idempotency.ts',
        find: execute,
        replace: [
          "const held = await pool.connect() // 'to keep the claim locked while the core works'",
          '        try {',
          "          await held.query('BEGIN')",
          "          await held.query('SELECT 1 FROM idempotency_keys WHERE client_id = $1 AND route = $2 AND key = $3 FOR UPDATE', [scope.clientId, scope.route, scope.key])",
          `          ${execute}`,
          "          await held.query('COMMIT')",
          '        } finally {',
          '          held.release()',
          '        }',
        ].join('\n'),
      },
    ],
  },
  {
    id: 'plain-insert-claim',
    stage: 6,
    title: 'The claim by a plain INSERT: a duplicate raises 23505 and gets a 500 instead of 409',
    mustFail: 'three-instances-execute-once',
    edits: [{ file: 'keyStore.ts', find: 'ON CONFLICT (client_id, route, key) DO NOTHING RETURNING owner', replace: 'RETURNING owner' }],
  },
  {
    id: 'claim-in-money-transaction',
    stage: 6,
    title: "The claim inserted on the money's transaction, so that the two commit together: no other instance sees it before the core is called",
    mustFail: 'three-instances-execute-once',
    edits: [
      {
        file: 'keyStore.ts',
        find: 'async claim({ clientId, route, key }: Scope, fingerprint: string): Promise<Claim> {',
        replace: 'async claim({ clientId, route, key }: Scope, fingerprint: string, db: Pool | Tx = pool): Promise<Claim> {',
      },
      { file: 'keyStore.ts', find: 'const inserted = await pool.query(', replace: 'const inserted = await db.query(' },
      { file: 'idempotency.ts', find: "import { createKeyStore } from './keyStore.ts'", replace: "import { createKeyStore, type Claim } from './keyStore.ts'" },
      {
        file: 'idempotency.ts',
        find: [
          '      const claim = await keys.claim(scope, request.fingerprint)',
          "      if (claim.kind === 'mismatch') return keyReused()",
          "      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)",
          "      if (claim.kind === 'completed') return replay(claim.response)",
          '',
          '      let outcome: Outcome',
          '      try {',
          `        ${execute}`,
          '      } catch (error) {',
        ].join('\n'),
        replace: [
          '      let claim: Claim | undefined',
          '      let outcome: Outcome',
          '      try {',
          '        outcome = await op.execute(async (result, tx) => {',
          '          claim = await keys.claim(scope, request.fingerprint, tx)',
          "          if (claim.kind !== 'claimed') throw new ClaimLostError('the key is taken') // and the money rolls back",
          '          await keys.complete(tx, scope, claim.owner, result)',
          '        })',
          '      } catch (error) {',
          "        if (claim?.kind === 'mismatch') return keyReused()",
          "        if (claim?.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)",
          "        if (claim?.kind === 'completed') return replay(claim.response)",
          "        if (claim?.kind !== 'claimed') throw error",
        ].join('\n'),
      },
      // A 503 never opened the money's transaction, so nothing was claimed to give back.
      {
        file: 'idempotency.ts',
        find: 'if (outcome.status >= 500) await keys.release(scope, claim.owner)',
        replace: 'if (outcome.status >= 500 && claim) await keys.release(scope, claim.owner)',
      },
    ],
  },
  {
    id: 'unique-violation-in-transaction',
    stage: 6,
    title: 'The claim by a plain INSERT inside a transaction: the 23505 is caught, but the transaction is aborted and the read after it fails with 25P02',
    mustFail: 'three-instances-execute-once',
    edits: [
      {
        file: 'keyStore.ts',
        find: "import { withSchemaLock } from '#bank/pg/db.ts'",
        replace: "import { inTransaction, withSchemaLock } from '#bank/pg/db.ts'",
      },
      {
        file: 'keyStore.ts',
        find: insertThenRead,
        replace: `        // 'One transaction for the claim: the INSERT or, if the key is taken, the read of the row that holds it.'
        const rows = await inTransaction(pool, async (tx) => {
          try {
            await tx.query(
              \`${insertColumns}
               ${claimValues}\`,
              [clientId, route, key, fingerprint, owner],
            )
            return undefined
          } catch (error) {
            if ((error as { code?: string }).code !== '23505') throw error // 23505: taken, so read who holds it
          }
          const read = await tx.query<Row>(`,
      },
      {
        file: 'keyStore.ts',
        find: endOfRead,
        replace: `FROM idempotency_keys WHERE \${WHERE}\`,
          [clientId, route, key],
        )
          return read.rows
        })
        if (!rows) return { kind: 'claimed', owner }
        const row = rows[0]`,
      },
    ],
  },
  {
    id: 'serializable-without-retry',
    stage: 6,
    title: 'Every transaction at SERIALIZABLE, "the safest", with no retry on 40001: transfers that waited for each other on one account fail with 500',
    mustFail: 'contended-accounts-all-execute',
    edits: [
      {
        file: 'idempotency.ts',
        find: '  const keys = await createKeyStore(pool, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })',
        replace: [
          "  pool.on('connect', (client) => void client.query('SET default_transaction_isolation = serializable'))",
          '  const keys = await createKeyStore(pool, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })',
        ].join('\n'),
      },
    ],
  },
  {
    id: 'purge-deletes-live-claims',
    stage: 6,
    title: 'The purge deletes every expired row, in progress or not: a claim still in flight past its TTL vanishes, and its duplicate executes',
    mustFail: 'purge-spares-live-claims',
    edits: [{ file: 'keyStore.ts', find: 'WHERE ${DEAD} LIMIT ${PURGE_BATCH}', replace: 'WHERE expires_at <= now() LIMIT ${PURGE_BATCH}' }],
  },
  {
    id: 'purge-by-instance-clock',
    stage: 6,
    title: "The purge judges expiry and leases by the instance's Date.now(): an instance whose clock runs ahead deletes a claim still in flight",
    mustFail: 'purge-spares-live-claims',
    edits: [
      {
        file: 'keyStore.ts',
        find: 'WHERE ${DEAD} LIMIT ${PURGE_BATCH}',
        replace:
          "WHERE expires_at <= to_timestamp(${Date.now() / 1000}) AND (status = 'completed' OR lease_until <= to_timestamp(${Date.now() / 1000})) LIMIT ${PURGE_BATCH}",
      },
    ],
  },
  {
    id: 'purge-on-timer-by-instance-clock',
    stage: 6,
    title: "The purge runs on a timer and judges rows by the instance's Date.now(): the instance whose clock runs ahead deletes a claim still in flight",
    mustFail: 'purge-spares-live-claims',
    edits: [
      {
        file: 'keyStore.ts',
        find: `      // An instance's timer only says how often to purge; which rows go is decided by now().
      if (Date.now() - lastPurge >= purgeEveryMs) {
        lastPurge = Date.now()
        await purge()
      }
`,
        replace: '',
      },
      {
        file: 'keyStore.ts',
        find: '  return {\n    async claim(',
        replace:
          "  // 'a background job keeps the table small'\n  setInterval(() => void purge().catch(() => undefined), purgeEveryMs).unref()\n  return {\n    async claim(",
      },
      {
        file: 'keyStore.ts',
        find: 'WHERE ${DEAD} LIMIT ${PURGE_BATCH}',
        replace:
          "WHERE expires_at <= to_timestamp(${Date.now() / 1000}) AND (status = 'completed' OR lease_until <= to_timestamp(${Date.now() / 1000})) LIMIT ${PURGE_BATCH}",
      },
    ],
  },
  {
    id: 'never-purged-on-postgres',
    stage: 6,
    title: 'Expired keys are ignored on lookup but never purged: the shared table grows without bound',
    mustFail: 'purge-spares-live-claims',
    edits: [
      {
        file: 'keyStore.ts',
        find: 'const purgeEveryMs = Math.max(1, Math.min(ttlMs, 60_000))',
        replace: 'const purgeEveryMs = Number.POSITIVE_INFINITY',
      },
    ],
  },
  {
    id: 'takeover-without-compare-and-set',
    stage: 6,
    title: 'A takeover that overwrites the owner whatever it now is: two instances that read the same expired lease both take the key over, and both execute',
    mustFail: 'simultaneous-takeovers-once',
    edits: [
      {
        file: 'keyStore.ts',
        find: "WHERE ${WHERE} AND owner = $5 AND status = 'in_progress' AND lease_until <= now()`,\n          [clientId, route, key, owner, row.owner],",
        replace: "WHERE ${WHERE}`, // 'we just read that the lease is over'\n          [clientId, route, key, owner],",
      },
    ],
  },
  {
    id: 'takeover-keeps-old-lease',
    stage: 6,
    title: 'A takeover that changes the owner but not the lease: the key stays up for grabs, and the next retry takes it over again',
    mustFail: 'crash-then-takeover',
    edits: [{ file: 'keyStore.ts', find: 'SET owner = $4, lease_until = now() + ${ms(leaseMs)}', replace: 'SET owner = $4' }],
  },
  {
    id: 'retry-after-from-instance-clock',
    stage: 6,
    title: "the lease is compared with now() in SQL, but Retry-After is counted from this instance's Date.now(): on a skewed instance it is off by the skew",
    mustFail: 'histories-6',
    edits: [
      {
        file: 'keyStore.ts',
        find: `ceil(extract(epoch FROM lease_until - now()) * 1000)::int AS "leftMs",`,
        replace: `(extract(epoch FROM lease_until) * 1000)::float8 AS "leftMs",`,
      },
      {
        file: 'keyStore.ts',
        find: `if (row.leased) return { kind: 'in-flight', retryAfterMs: row.leftMs }`,
        replace: `if (row.leased) return { kind: 'in-flight', retryAfterMs: row.leftMs - Date.now() }`,
      },
    ],
  },
]
