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
  {
    id: 'lease-divided-by-1000',
    stage: 3,
    title: 'LAB_LEASE_MS divided by 1000 as if it were converted to seconds: the lease is a thousand times too short',
    mustFail: 'lease-length',
    edits: [{ file: 'idempotency.ts', find: 'createKeyStore(db, config.leaseMs)', replace: 'createKeyStore(db, config.leaseMs / 1000)' }],
  },
  {
    id: 'lease-multiplied-by-1000',
    stage: 3,
    title: 'LAB_LEASE_MS taken for seconds and multiplied by 1000: the lease is a thousand times too long',
    mustFail: 'lease-length',
    edits: [{ file: 'idempotency.ts', find: 'createKeyStore(db, config.leaseMs)', replace: 'createKeyStore(db, config.leaseMs * 1000)' }],
  },
  {
    id: 'retry-after-constant',
    stage: 3,
    title: 'Retry-After is always 1 second, whatever is left of the lease',
    mustFail: 'retry-after-remaining-lease',
    edits: [{ file: 'idempotency.ts', find: 'requestInFlight(claim.retryAfterMs / 1000)', replace: 'requestInFlight(1)' }],
  },
  {
    id: 'retry-after-whole-lease',
    stage: 3,
    title: 'Retry-After is the whole lease on every 409, however much of it has already passed',
    mustFail: 'retry-after-remaining-lease',
    edits: [{ file: 'idempotency.ts', find: 'requestInFlight(claim.retryAfterMs / 1000)', replace: 'requestInFlight(config.leaseMs / 1000)' }],
  },
  {
    id: 'takeover-before-fingerprint',
    stage: 3,
    title: 'An expired lease is taken over before the fingerprint is compared, so a changed body executes under the old key',
    mustFail: 'takeover-different-body-422',
    edits: [
      {
        file: 'keyStore.ts',
        find: `        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed') return { kind: 'completed' }`,
        replace: `        // An expired lease is free for whoever asks next.
        if (row.status === 'in_progress' && row.leaseUntil! <= now && takeOver.run(owner, now + leaseMs, key, row.owner!, now).changes === 1)
          return { kind: 'claimed', owner }
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed') return { kind: 'completed' }`,
      },
    ],
  },
  {
    id: 'release-without-owner-check',
    stage: 3,
    title: "A failed request releases its key without checking it still owns it: after a takeover it frees the new owner's claim",
    mustFail: 'takeover-core-failure',
    edits: [
      {
        file: 'keyStore.ts',
        find: `  const release = db.prepare<[string, string]>(
    "DELETE FROM idempotency_keys WHERE key = ? AND owner = ? AND status = 'in_progress'",
  )`,
        replace: `  const release = db.prepare<[string]>('DELETE FROM idempotency_keys WHERE key = ?')`,
      },
      { file: 'keyStore.ts', find: 'release.run(key, owner)', replace: 'release.run(key)' },
    ],
  },
  {
    id: 'completed-keeps-owner',
    stage: 3,
    title: 'Completing switches the status but leaves the owner and lease in the row: a completed key still names a request holding it',
    mustFail: 'key-row-states',
    edits: [
      {
        file: 'keyStore.ts',
        find: `    \`UPDATE idempotency_keys SET status = 'completed', owner = NULL, lease_until = NULL
     WHERE key = ? AND owner = ? AND status = 'in_progress'\`,`,
        replace: `    \`UPDATE idempotency_keys SET status = 'completed'
     WHERE key = ? AND owner = ? AND status = 'in_progress'\`,`,
      },
    ],
  },
  {
    id: 'release-on-500-only',
    stage: 3,
    title: 'only a 500 releases the key: a 503 from the core leaves it in progress, so the retry is refused as in flight',
    mustFail: 'core-failure-releases',
    edits: [
      {
        file: 'idempotency.ts',
        find: '  if (outcome.status >= 500) claim.release()',
        replace: '  if (outcome.status === 500) claim.release()',
      },
    ],
  },
  {
    id: 'refusal-left-in-progress',
    stage: 3,
    title: 'only a 201 completes the key: a refused transfer (402, 403, 404) leaves it in progress, so its retry gets 409 and, after the lease, executes',
    mustFail: 'histories-3',
    edits: [
      {
        file: 'idempotency.ts',
        find: `        complete: () => keys.complete(key, claim.owner),`,
        replace: `        complete: (outcome) => {
          if (outcome.status === 201) keys.complete(key, claim.owner)
        },`,
      },
    ],
  },
]
