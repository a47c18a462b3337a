// Stage 3's known-wrong implementations: the classic ways an in-progress
// state goes wrong, each caught by one check on every seed.
import type { Mutant } from './mutant.ts'

export const stage3Mutants: Mutant[] = [
  {
    id: 'completed-before-money',
    stage: 3,
    title: 'the key is marked completed before the money moves, so after a crash the money never moves',
    mustFail: 'crash-mid-transfer',
    edits: [
      {
        file: 'idempotency.ts',
        find: `      // The transfer happens here; phase two commits inside its transaction.
      return executeClaimed(op, {
        complete: () => keys.complete(key, claim.owner),`,
        replace: `      // Mark the key done, then move the money.
      keys.complete(key, claim.owner)
      return executeClaimed(op, {
        complete: () => undefined,`,
      },
    ],
  },
  {
    id: 'money-before-claim',
    stage: 3,
    title: 'the money moves before the key is claimed (execute first, record after), so duplicates in flight execute too',
    mustFail: 'in-flight-duplicate-409',
    edits: [
      {
        file: 'idempotency.ts',
        find: `      // Phase one: the claim, committed on its own.
      const claim = keys.claim(key, request.fingerprint)`,
        replace: `      // Execute first, record after.
      const executed = await op.execute()
      const claim = keys.claim(key, request.fingerprint)`,
      },
      {
        file: 'idempotency.ts',
        find: `      return executeClaimed(op, {
        complete: () => keys.complete(key, claim.owner),
        release: () => keys.release(key, claim.owner),
      })`,
        replace: `      keys.complete(key, claim.owner)
      return executed`,
      },
    ],
  },
  {
    id: 'no-lease',
    stage: 3,
    title: 'an in_progress claim never expires, so after a crash the key answers 409 forever',
    mustFail: 'crash-mid-transfer',
    edits: [
      {
        file: 'keyStore.ts',
        find: `if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }`,
        replace: `return { kind: 'in-flight', retryAfterMs: leaseMs }`,
      },
    ],
  },
  {
    id: 'lease-without-owner-check',
    stage: 3,
    title: 'completing does not check who holds the claim, so a superseded original commits the transfer a second time',
    mustFail: 'lease-expired-owner-check',
    edits: [
      {
        file: 'keyStore.ts',
        find: `  const complete = db.prepare<[string, string]>(
    \`UPDATE idempotency_keys SET status = 'completed', owner = NULL, lease_until = NULL
     WHERE key = ? AND owner = ? AND status = 'in_progress'\`,
  )`,
        replace: `  const complete = db.prepare<[string]>(
    \`UPDATE idempotency_keys SET status = 'completed', owner = NULL, lease_until = NULL
     WHERE key = ?\`,
  )`,
      },
      {
        file: 'keyStore.ts',
        find: `if (complete.run(key, owner).changes !== 1)`,
        replace: `if (complete.run(key).changes !== 1)`,
      },
    ],
  },
  {
    id: 'conflict-before-mismatch',
    stage: 3,
    title: 'a different payload under a key in flight gets 409 instead of 422',
    mustFail: 'in-flight-different-payload-422',
    edits: [
      {
        file: 'keyStore.ts',
        find: `        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed') return { kind: 'completed' }
        if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }`,
        replace: `        if (row.status === 'in_progress' && row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed') return { kind: 'completed' }`,
      },
    ],
  },
]
