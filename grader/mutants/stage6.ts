// Stage 6 mutants: the classic mistakes of a first PostgreSQL port. Each is one
// plausible edit of the reference solution, and each fails the check aimed at
// it on every seed.
import type { Mutant } from './mutant.ts'

const claimValues = "VALUES ($1, $2, $3, $4, 'in_progress', $5, now() + ${ms(leaseMs)}, now() + ${ms(ttlMs)})"
const execute = 'outcome = await op.execute((result, tx) => keys.complete(tx, scope, claim.owner, result))'

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
          "        try {",
          "          await held.query('BEGIN')",
          "          await held.query('SELECT 1 FROM idempotency_keys WHERE client_id = $1 AND route = $2 AND key = $3 FOR UPDATE', [scope.clientId, scope.route, scope.key])",
          `          ${execute}`,
          "          await held.query('COMMIT')",
          "        } finally {",
          "          held.release()",
          "        }",
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
]
