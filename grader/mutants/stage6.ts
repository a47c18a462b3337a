// Stage 6 mutants: the classic mistakes of a first PostgreSQL port. Each is one
// plausible edit of the reference solution, and each fails the check aimed at
// it on every seed.
import { editsOf, type Mutant } from './mutant.ts'
import { neverPurge } from './stage5.ts'

const layer = editsOf('idempotency.ts')
const store = editsOf('keyStore.ts')

/** The instance's clock, written into the SQL in place of the database's now(). */
const instanceNow = 'to_timestamp(${Date.now() / 1000})'
/** The lease left, as the claim's read computes it for Retry-After. */
const leftMs = (expression: string) => store('claim', 'ceil(extract(epoch FROM lease_until - now()) * 1000)::int', expression)
/** The rows the periodic purge deletes. */
const purgeWhere = (condition: string) => store('purge', 'WHERE ${DEAD}', `WHERE ${condition}`)
const purgeByInstanceClock = purgeWhere(`expires_at <= ${instanceNow} AND (status = 'completed' OR lease_until <= ${instanceNow})`)

export const stage6Mutants: Mutant[] = [
  {
    id: 'instance-clock',
    stage: 6,
    title: "Leases and expiry from the instance's Date.now(): an instance whose clock runs ahead takes over a live lease",
    mustFail: 'skewed-clocks',
    edits: [
      store(
        'claim',
        'now() + ${ms(leaseMs)}, now() + ${ms(ttlMs)}',
        'to_timestamp(${(Date.now() + leaseMs) / 1000}), to_timestamp(${(Date.now() + ttlMs) / 1000})',
      ),
    ],
  },
  {
    id: 'retry-after-by-instance-clock',
    stage: 6,
    title:
      "Leases by the database, but the lease left for Retry-After from the instance's Date.now(): an instance 30 s off tells clients to come back at the wrong time",
    mustFail: 'skewed-clocks',
    edits: [leftMs('(ceil(extract(epoch FROM lease_until) * 1000) - ${Date.now()})::int')],
  },
  {
    id: 'expiry-by-instance-clock',
    stage: 6,
    title:
      "Leases by the database, but expiry judged by the instance's Date.now(): to an instance 30 s ahead, a key with a 25 s TTL is gone at once, and its retry executes again",
    mustFail: 'skewed-clocks',
    edits: [store('claim', 'expires_at <= now() AS expired', `expires_at <= ${instanceNow} AS expired`), store('claim', ' AND ${DEAD}', '')],
  },
  {
    id: 'transaction-across-core',
    stage: 6,
    title: 'A transaction (and its pooled connection) held open across the core call: a small pool starves, duplicates wait',
    mustFail: 'small-pool-answers-duplicates',
    edits: [
      layer('handle', 'outcome = await op.execute((result, tx) => keys.complete(tx, scope, claim.owner, result))', (found) =>
        [
          "const held = await pool.connect() // 'to keep the claim locked while the core works'",
          '        try {',
          "          await held.query('BEGIN')",
          "          await held.query('SELECT 1 FROM idempotency_keys WHERE client_id = $1 AND route = $2 AND key = $3 FOR UPDATE', [scope.clientId, scope.route, scope.key])",
          `          ${found}`,
          "          await held.query('COMMIT')",
          '        } finally {',
          '          held.release()',
          '        }',
        ].join('\n'),
      ),
    ],
  },
  {
    id: 'plain-insert-claim',
    stage: 6,
    title: 'The claim by a plain INSERT: a duplicate raises 23505 and gets a 500 instead of 409',
    mustFail: 'three-instances-execute-once',
    edits: [store('claim', 'ON CONFLICT (client_id, route, key) DO NOTHING ', '')],
  },
  {
    id: 'claim-in-money-transaction',
    stage: 6,
    title: "The claim inserted on the money's transaction, so that the two commit together: no other instance sees it before the core is called",
    mustFail: 'three-instances-execute-once',
    edits: [
      store('claim', 'fingerprint: string)', 'fingerprint: string, db: Pool | Tx = pool)'),
      store('claim', 'const inserted = await pool.query(', 'const inserted = await db.query('),
      layer('import ./keyStore.ts', '{ createKeyStore }', '{ createKeyStore, type Claim }'),
      layer(
        'handle',
        'const claim = await keys.claim(…} catch (error) {',
        [
          'let claim: Claim | undefined',
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
      ),
      // A 503 never opened the money's transaction, so nothing was claimed to give back.
      layer('handle', 'if (outcome.status >= 500)', 'if (outcome.status >= 500 && claim)'),
    ],
  },
  {
    id: 'unique-violation-in-transaction',
    stage: 6,
    title: 'The claim by a plain INSERT inside a transaction: the 23505 is caught, but the transaction is aborted and the read after it fails with 25P02',
    mustFail: 'three-instances-execute-once',
    edits: [
      store('import #bank/pg/db.ts', '{ withSchemaLock }', '{ inTransaction, withSchemaLock }'),
      store(
        'claim',
        'const inserted = await pool.query(…const { rows } = await pool.query<Row>(',
        `// 'One transaction for the claim: the INSERT or, if the key is taken, the read of the row that holds it.'
        const rows = await inTransaction(pool, async (tx) => {
          try {
            await tx.query(
              \`INSERT INTO idempotency_keys (client_id, route, key, fingerprint, status, owner, lease_until, expires_at)
               VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + \${ms(leaseMs)}, now() + \${ms(ttlMs)})\`,
              [clientId, route, key, fingerprint, owner],
            )
            return undefined
          } catch (error) {
            if ((error as { code?: string }).code !== '23505') throw error // 23505: taken, so read who holds it
          }
          const read = await tx.query<Row>(`,
      ),
      store(
        'claim',
        '\n        const row = rows[0]',
        (found) => `\n          return read.rows\n        })\n        if (!rows) return { kind: 'claimed', owner }${found}`,
      ),
    ],
  },
  {
    id: 'serializable-without-retry',
    stage: 6,
    title: 'Every transaction at SERIALIZABLE, "the safest", with no retry on 40001: transfers that waited for each other on one account fail with 500',
    mustFail: 'contended-accounts-all-execute',
    edits: [
      layer(
        'keys',
        '  const keys',
        (found) => `  pool.on('connect', (client) => void client.query('SET default_transaction_isolation = serializable'))\n${found}`,
      ),
    ],
  },
  {
    id: 'purge-deletes-live-claims',
    stage: 6,
    title: 'The purge deletes every expired row, in progress or not: a claim still in flight past its TTL vanishes, and its duplicate executes',
    mustFail: 'purge-spares-live-claims',
    edits: [purgeWhere('expires_at <= now()')],
  },
  {
    id: 'purge-by-instance-clock',
    stage: 6,
    title: "The purge judges expiry and leases by the instance's Date.now(): an instance whose clock runs ahead deletes a claim still in flight",
    mustFail: 'purge-spares-live-claims',
    edits: [purgeByInstanceClock],
  },
  {
    id: 'purge-on-timer-by-instance-clock',
    stage: 6,
    title: "The purge runs on a timer and judges rows by the instance's Date.now(): the instance whose clock runs ahead deletes a claim still in flight",
    mustFail: 'purge-spares-live-claims',
    edits: [
      store('claim', "      // An instance's timer…\n      }\n", ''),
      store(
        'createKeyStore',
        '\n  return {\n',
        (found) => `\n  // 'a background job keeps the table small'\n  setInterval(() => void purge().catch(() => undefined), purgeEveryMs).unref()${found}`,
      ),
      purgeByInstanceClock,
    ],
  },
  {
    id: 'never-purged-on-postgres',
    stage: 6,
    title: 'Expired keys are ignored on lookup but never purged: the shared table grows without bound',
    mustFail: 'purge-spares-live-claims',
    edits: [neverPurge],
  },
  {
    id: 'takeover-without-compare-and-set',
    stage: 6,
    title: 'A takeover that overwrites the owner whatever it now is: two instances that read the same expired lease both take the key over, and both execute',
    mustFail: 'simultaneous-takeovers-once',
    edits: [
      store(
        'claim',
        'WHERE ${WHERE} AND owner = $5…row.owner],',
        "WHERE ${WHERE}`, // 'we just read that the lease is over'\n          [clientId, route, key, owner],",
      ),
    ],
  },
  {
    id: 'takeover-keeps-old-lease',
    stage: 6,
    title: 'A takeover that changes the owner but not the lease: the key stays up for grabs, and the next retry takes it over again',
    mustFail: 'crash-then-takeover',
    edits: [store('claim', 'SET owner = $4, lease_until = now() + ${ms(leaseMs)}', 'SET owner = $4')],
  },
  {
    id: 'retry-after-from-instance-clock',
    stage: 6,
    title: "the lease is compared with now() in SQL, but Retry-After is counted from this instance's Date.now(): on a skewed instance it is off by the skew",
    mustFail: 'histories-6',
    edits: [leftMs('(extract(epoch FROM lease_until) * 1000)::float8'), store('claim', 'retryAfterMs: row.leftMs', (found) => `${found} - Date.now()`)],
  },
]
