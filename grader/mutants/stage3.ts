// Stage 3's known-wrong implementations: the classic ways an in-progress
// state goes wrong, each caught by one check on every seed.
import { editsOf, type Mutant } from './mutant.ts'

const layer = editsOf('idempotency.ts')
const store = editsOf('keyStore.ts')

const mismatch = 'if (row.fingerprint !== fingerprint)'
const leaseToStore = (lease: string) => layer('keys', 'config.leaseMs', lease)
const retryAfter = (seconds: string) => layer('handle', 'requestInFlight(claim.retryAfterMs / 1000)', `requestInFlight(${seconds})`)

export const stage3Mutants: Mutant[] = [
  {
    id: 'completed-before-money',
    stage: 3,
    title: 'the key is marked completed before the money moves, so after a crash the money never moves',
    mustFail: 'crash-mid-transfer',
    edits: [
      layer(
        'handle',
        '// The transfer happens here;…complete: () => keys.complete(key, claim.owner),',
        `// Mark the key done, then move the money.
      keys.complete(key, claim.owner)
      return executeClaimed(op, {
        complete: () => undefined,`,
      ),
    ],
  },
  {
    id: 'money-before-claim',
    stage: 3,
    title: 'the money moves before the key is claimed (execute first, record after), so duplicates in flight execute too',
    mustFail: 'in-flight-duplicate-409',
    edits: [
      layer('handle', '// Phase one: the claim, committed on its own.', '// Execute first, record after.\n      const executed = await op.execute()'),
      layer('handle', 'return executeClaimed(op, {…})', 'keys.complete(key, claim.owner)\n      return executed'),
    ],
  },
  {
    id: 'no-lease',
    stage: 3,
    title: 'an in_progress claim never expires, so after a crash the key answers 409 forever',
    mustFail: 'crash-mid-transfer',
    edits: [
      store(
        'claim',
        "if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }",
        "return { kind: 'in-flight', retryAfterMs: leaseMs }",
      ),
    ],
  },
  {
    id: 'lease-without-owner-check',
    stage: 3,
    title: 'completing does not check who holds the claim, so a superseded original commits the transfer a second time',
    mustFail: 'lease-expired-owner-check',
    edits: [
      store('complete', 'db.prepare<[string, string]>', 'db.prepare<[string]>'),
      store('complete', "WHERE key = ? AND owner = ? AND status = 'in_progress'", 'WHERE key = ?'),
      store('complete', 'complete.run(key, owner)', 'complete.run(key)'),
    ],
  },
  {
    id: 'conflict-before-mismatch',
    stage: 3,
    title: 'a different payload under a key in flight gets 409 instead of 422',
    mustFail: 'in-flight-different-payload-422',
    edits: [
      store(
        'claim',
        `${mismatch}…retryAfterMs: row.leaseUntil! - now }`,
        `if (row.status === 'in_progress' && row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed') return { kind: 'completed' }`,
      ),
    ],
  },
  {
    id: 'lease-divided-by-1000',
    stage: 3,
    title: 'LAB_LEASE_MS divided by 1000 as if it were converted to seconds: the lease is a thousand times too short',
    mustFail: 'lease-length',
    edits: [leaseToStore('config.leaseMs / 1000')],
  },
  {
    id: 'lease-multiplied-by-1000',
    stage: 3,
    title: 'LAB_LEASE_MS taken for seconds and multiplied by 1000: the lease is a thousand times too long',
    mustFail: 'lease-length',
    edits: [leaseToStore('config.leaseMs * 1000')],
  },
  {
    id: 'retry-after-constant',
    stage: 3,
    title: 'Retry-After is always 1 second, whatever is left of the lease',
    mustFail: 'retry-after-remaining-lease',
    edits: [retryAfter('1')],
  },
  {
    id: 'retry-after-whole-lease',
    stage: 3,
    title: 'Retry-After is the whole lease on every 409, however much of it has already passed',
    mustFail: 'retry-after-remaining-lease',
    edits: [retryAfter('config.leaseMs / 1000')],
  },
  {
    id: 'takeover-before-fingerprint',
    stage: 3,
    title: 'An expired lease is taken over before the fingerprint is compared, so a changed body executes under the old key',
    mustFail: 'takeover-different-body-422',
    edits: [
      store(
        'claim',
        mismatch,
        (found) => `// An expired lease is free for whoever asks next.
        if (row.status === 'in_progress' && row.leaseUntil! <= now && takeOver.run(owner, now + leaseMs, key, row.owner!, now).changes === 1)
          return { kind: 'claimed', owner }
        ${found}`,
      ),
    ],
  },
  {
    id: 'release-without-owner-check',
    stage: 3,
    title: "A failed request releases its key without checking it still owns it: after a takeover it frees the new owner's claim",
    mustFail: 'takeover-core-failure',
    edits: [
      store('release', 'db.prepare<[string, string]>(…)', "db.prepare<[string]>('DELETE FROM idempotency_keys WHERE key = ?')"),
      store('release', 'release.run(key, owner)', 'release.run(key)'),
    ],
  },
  {
    id: 'completed-keeps-owner',
    stage: 3,
    title: 'Completing switches the status but leaves the owner and lease in the row: a completed key still names a request holding it',
    mustFail: 'key-row-states',
    edits: [store('complete', ', owner = NULL, lease_until = NULL', '')],
  },
  {
    id: 'release-on-500-only',
    stage: 3,
    title: 'only a 500 releases the key: a 503 from the core leaves it in progress, so the retry is refused as in flight',
    mustFail: 'core-failure-releases',
    edits: [layer('executeClaimed', 'if (outcome.status >= 500) claim.release()', 'if (outcome.status === 500) claim.release()')],
  },
  {
    id: 'takeover-keeps-lease',
    stage: 3,
    title: 'A takeover names the new owner but keeps the lease that ran out: a duplicate right after it takes the claim over again and executes a second time',
    mustFail: 'histories-3',
    edits: [store('takeOver', 'SET owner = ?, lease_until = ?', 'SET owner = ?, lease_until = lease_until + 0 * ?')],
  },
  {
    id: 'claim-lost-as-already-processed',
    stage: 3,
    title: 'A superseded original whose transfer rolled back is told "already processed", not that its claim was lost',
    mustFail: 'histories-3',
    edits: [
      layer(
        'executeClaimed',
        'if (error instanceof ClaimLostError) return claimLost()',
        'if (error instanceof ClaimLostError) return alreadyProcessed(op.idempotencyKey ?? "")',
      ),
    ],
  },
  {
    id: 'refusal-left-in-progress',
    stage: 3,
    title: 'only a 201 completes the key: a refused transfer (402, 403, 404) leaves it in progress, so its retry gets 409 and, after the lease, executes',
    mustFail: 'histories-3',
    edits: [
      layer(
        'handle',
        'complete: () => keys.complete(key, claim.owner),',
        `complete: (outcome) => {
          if (outcome.status === 201) keys.complete(key, claim.owner)
        },`,
      ),
    ],
  },
]
