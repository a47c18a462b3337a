// Stage 3: claim, execute, complete — and survive a crash in between.
//
// Today this is stage 2: the key is claimed, and from that instant its row
// means "done", although the transfer has not even started. A duplicate that
// arrives while the first request is still running is told "already
// processed"; if the server dies before the transfer commits, every retry is
// told "already processed" too, and the money never moves.
//
// The goal: the claim is written `in_progress` and committed before the
// transfer runs (keyStore.ts). The transfer and the switch to `completed` then
// commit in ONE transaction, so there is no moment where the money moved but
// the key says otherwise, or the reverse. A duplicate that arrives in between
// gets 409 and Retry-After.
import { alreadyProcessed, keyReused, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer, Operation, Outcome } from '#bank/layer.ts'
import { identify } from '#given/02-fingerprint/identify.ts'
import { createKeyStore } from './keyStore.ts'

/**
 * Runs the transfer for the holder of a claim. `complete` runs inside the
 * money's transaction (phase two); `release` gives the key back when nothing
 * was committed.
 */
export async function executeClaimed(
  op: Operation,
  _claim: { complete(outcome: Outcome): void; release(): void },
): Promise<Outcome> {
  // TODO (phase two): rename _claim to claim and complete the key INSIDE the
  // money's transaction: op.execute((result) => claim.complete(result)). Then
  // the debit, the credit, the ledger row and the switch to `completed` commit
  // together, or (if complete throws) none of them does.
  //   - If op.execute throws a ClaimLostError (#bank/keyClaims.ts), our lease ran out
  //     and a retry owns the key now: the money rolled back, answer claimLost()
  //     (from #bank/idempotencyAnswers.ts).
  //   - Any other error: claim.release(), then rethrow it.
  // TODO (release): a 5xx outcome (the core failed) committed nothing, and its
  // outcome is unknown to the client: claim.release() so that the retry runs
  // again, instead of being told "already processed" about money that never moved.
  return op.execute()
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
      // keys.claim() does not answer 'in-flight' yet: that is your TODO in keyStore.ts.
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
