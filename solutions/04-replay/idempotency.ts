// Stage 4: a completed duplicate gets the first response back, byte for byte.
//
// Recomputing would be wrong: the balance has moved on and the clock too, so
// the customer's screen would disagree with itself. What was answered the
// first time is stored with the completion and replayed, marked
// `Idempotent-Replayed: true` so clients and logs can tell.
import { keyReused, REPLAYED_HEADER, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer, Outcome } from '#bank/layer.ts'
import { identify } from '#given/02-fingerprint/identify.ts'
import { executeClaimed } from '#given/03-in-progress/executeClaimed.ts'
import { createKeyStore } from './keyStore.ts'

/** The stored status, headers and body, plus the marker. */
export const replay = (stored: Outcome): Outcome => ({
  ...stored,
  headers: { ...stored.headers, [REPLAYED_HEADER]: 'true' },
})

export const createLayer: CreateLayer = ({ db, config }) => {
  const keys = createKeyStore(db, config.leaseMs)
  return {
    async handle(op) {
      const request = identify(op)
      if ('status' in request) return request
      const { key } = request

      const claim = keys.claim(key, request.fingerprint)
      if (claim.kind === 'mismatch') return keyReused()
      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)
      if (claim.kind === 'completed') return replay(claim.response)

      // The transfer happens here. Its outcome is stored in the same
      // transaction: a 201, and a 402/403/404 too, because executing decided
      // them: they are this request's result (to try again after a top-up is
      // a new request, with a new key). A 5xx moved nothing and is not stored.
      return executeClaimed(op, {
        complete: (outcome) => keys.complete(key, claim.owner, outcome),
        release: () => keys.release(key, claim.owner),
      })
    },
  }
}
