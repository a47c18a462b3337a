// Given to stage 4 on, solved: executeClaimed() of solutions/03-in-progress/idempotency.ts.
// test/given.test.ts keeps it identical to that file; edit the solution, then copy.
import { claimLost } from '#bank/idempotencyAnswers.ts'
import { ClaimLostError } from '#bank/keyClaims.ts'
import type { Operation, Outcome } from '#bank/layer.ts'

/**
 * Runs the transfer for the holder of a claim. `complete` runs inside the
 * money's transaction (phase two); `release` gives the key back when nothing
 * was committed.
 */
export async function executeClaimed(
  op: Operation,
  claim: { complete(outcome: Outcome): void; release(): void },
): Promise<Outcome> {
  let outcome: Outcome
  try {
    outcome = await op.execute((result) => claim.complete(result))
  } catch (error) {
    // Our lease ran out and a retry owns the key now: it moves the money, we must not.
    if (error instanceof ClaimLostError) return claimLost()
    claim.release()
    throw error
  }
  // A 5xx means the core failed and nothing was committed: release the key so
  // that the client's retry executes, instead of being told "already
  // processed" about money that never moved.
  if (outcome.status >= 500) claim.release()
  return outcome
}
