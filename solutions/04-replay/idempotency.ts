// Stage 4: a completed duplicate gets the first response back, byte for byte.
//
// Recomputing would be wrong: the balance has moved on and the clock too, so
// the customer's screen would disagree with itself. What was answered the
// first time is stored with the completion and replayed, marked
// `Idempotent-Replayed: true` so clients and logs can tell.
import { claimLost, keyReused, notIJson, REPLAYED_HEADER, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer } from '#bank/layer.ts'
import { parseIdempotencyKey } from '#solutions/01-unique-key/keyHeader.ts'
import { fingerprint } from '#solutions/02-fingerprint/fingerprint.ts'
import { ClaimLostError } from '#solutions/03-in-progress/keyStore.ts'
import { createKeyStore } from './keyStore.ts'

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

      const claim = keys.claim(key, print)
      if (claim.kind === 'mismatch') return keyReused()
      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)
      if (claim.kind === 'completed') {
        // The replay: the stored status, headers and body, plus the marker.
        const { response } = claim
        return { ...response, headers: { ...response.headers, [REPLAYED_HEADER]: 'true' } }
      }

      // The transfer happens here. The outcome is stored in its transaction:
      // a 201, and a 402/403/404 too, because executing decided them: they are
      // this request's result (to try again after a top-up is a new request,
      // with a new key). A 5xx moved nothing and is not stored.
      let outcome
      try {
        outcome = await op.execute((result) => keys.complete(key, claim.owner, result))
      } catch (error) {
        if (error instanceof ClaimLostError) return claimLost()
        keys.release(key, claim.owner)
        throw error
      }
      if (outcome.status >= 500) keys.release(key, claim.owner)
      return outcome
    },
  }
}
