// Stage 3: claim, execute, complete — and survive a crash in between.
//
// The claim is written `in_progress` and committed before the transfer runs.
// The transfer and the switch to `completed` then commit in ONE transaction,
// so there is no moment where the money moved but the key says otherwise, or
// the reverse. A duplicate that arrives in between gets 409 and Retry-After.
import { alreadyProcessed, claimLost, keyReused, notIJson, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer } from '#bank/layer.ts'
import { parseIdempotencyKey } from '#solutions/01-unique-key/keyHeader.ts'
import { fingerprint } from '#solutions/02-fingerprint/fingerprint.ts'
import { ClaimLostError, createKeyStore } from './keyStore.ts'

export const createLayer: CreateLayer = ({ db, config }) => {
  const keys = createKeyStore(db, config.leaseMs)
  return {
    async handle(op) {
      const key = parseIdempotencyKey(op.idempotencyKey)
      if (typeof key !== 'string') return key
      let print: string
      try {
        print = fingerprint(op.payload)
      } catch (error) {
        return notIJson((error as Error).message)
      }

      // Phase one: the claim.
      const claim = keys.claim(key, print)
      if (claim.kind === 'mismatch') return keyReused()
      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)
      if (claim.kind === 'completed') return alreadyProcessed(key)

      // The transfer happens here. Phase two runs inside its transaction.
      let outcome
      try {
        outcome = await op.execute(() => keys.complete(key, claim.owner))
      } catch (error) {
        // Our lease ran out and a retry owns the key now: it moves the money, we must not.
        if (error instanceof ClaimLostError) return claimLost()
        keys.release(key, claim.owner)
        throw error
      }
      // A 5xx means the core failed and nothing was committed: release the
      // key so that the client's retry executes, instead of being told
      // "already processed" about money that never moved.
      if (outcome.status >= 500) keys.release(key, claim.owner)
      return outcome
    },
  }
}
