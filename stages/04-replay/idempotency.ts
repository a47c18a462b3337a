// Stage 4: a completed duplicate gets the first response back, byte for byte.
//
// Today this is stage 3: a completed duplicate is told
// {"status":"already-processed"}, which says nothing of what happened. Was it
// a 201? Which transfer id? A 402? The client that lost the first answer still
// does not know.
//
// Recomputing the answer would be wrong too: the balance has moved on and the
// clock too, so the customer's screen would disagree with itself. What was
// answered the first time is stored with the completion and replayed, marked
// `Idempotent-Replayed: true` so clients and logs can tell.
import { alreadyProcessed, keyReused, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer, Outcome } from '#bank/layer.ts'
import { identify } from '#given/02-fingerprint/identify.ts'
import { executeClaimed } from '#given/03-in-progress/executeClaimed.ts'
import { createKeyStore } from './keyStore.ts'

/** The stored status, headers and body, plus the marker. */
export const replay = (stored: Outcome): Outcome => {
  // TODO (marker): return the stored outcome with one header added,
  // REPLAYED_HEADER (from #bank/idempotencyAnswers.ts) set to 'true'. Add it
  // here and only here: never to a first answer, and never store it.
  return stored
}

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
      // TODO (replay): once keys.claim() hands back the stored response, answer
      // replay(claim.response) here instead of "already processed".
      if (claim.kind === 'completed') return alreadyProcessed(key)

      // The transfer happens here. Its outcome reaches keys.complete() inside
      // the money's transaction: that is where it gets stored (keyStore.ts).
      // A 5xx never gets there: executeClaimed releases the key instead.
      return executeClaimed(op, {
        complete: (outcome) => keys.complete(key, claim.owner, outcome),
        release: () => keys.release(key, claim.owner),
      })
    },
  }
}
