// Stage 3: claim, execute, complete — and survive a crash in between.
//
// The claim is written `in_progress` and committed before the transfer runs.
// The transfer and the switch to `completed` then commit in ONE transaction,
// so there is no moment where the money moved but the key says otherwise, or
// the reverse. A duplicate that arrives in between gets 409 and Retry-After.
import { alreadyProcessed, claimLost, keyReused, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer, Operation, Outcome } from '#bank/layer.ts'
import { identify } from '#given/02-fingerprint/identify.ts'
import { ClaimLostError } from '#bank/keyClaims.ts'
import { createKeyStore } from './keyStore.ts'

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

export const createLayer: CreateLayer = ({ db, config }) => {
  const keys = createKeyStore(db, config.leaseMs)
  return {
    async handle(op) {
      const request = identify(op)
      if ('status' in request) return request
      const { key } = request

      // Phase one: the claim, committed on its own.
      const claim = keys.claim(key, request.fingerprint)
      if (claim.kind === 'mismatch') return keyReused()
      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)
      if (claim.kind === 'completed') return alreadyProcessed(key)

      // The transfer happens here; phase two commits inside its transaction.
      return executeClaimed(op, {
        complete: () => keys.complete(key, claim.owner),
        release: () => keys.release(key, claim.owner),
      })
    },
  }
}
