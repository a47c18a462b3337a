// Stage 5: keys scoped per client and route, remembered for a published time.
//
// The flow is stage 4's. What changes is what a key *is*: the triple
// (client, route, key), so no client can ever receive, or even detect, the
// result of another client's request; and how long it lives: LAB_KEY_TTL_MS
// after the first request, announced on every response in the
// Idempotency-Key-Policy header.
import { claimLost, keyReused, notIJson, REPLAYED_HEADER, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer } from '#bank/layer.ts'
import { parseIdempotencyKey } from '#solutions/01-unique-key/keyHeader.ts'
import { fingerprint } from '#solutions/02-fingerprint/fingerprint.ts'
import { ClaimLostError } from '#solutions/03-in-progress/keyStore.ts'
import { createKeyStore } from './keyStore.ts'

export const createLayer: CreateLayer = ({ db, config }) => {
  const keys = createKeyStore(db, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })
  return {
    // Machine-readable retention (seconds), so clients can size their retry horizon.
    policyHeaders: {
      'Idempotency-Key-Policy': `ttl=${Math.floor(config.keyTtlMs / 1000)}, lease=${Math.ceil(config.leaseMs / 1000)}, scope="client route"`,
    },
    async handle(op) {
      const key = parseIdempotencyKey(op.idempotencyKey)
      if (typeof key !== 'string') return key
      let print: string
      try {
        print = fingerprint(op.payload)
      } catch (error) {
        return notIJson((error as Error).message)
      }

      // The scope: who sent it and where, not only the string they chose.
      const scope = { clientId: op.clientId, route: op.route, key }
      const claim = keys.claim(scope, print)
      if (claim.kind === 'mismatch') return keyReused()
      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)
      if (claim.kind === 'completed') {
        const { response } = claim
        return { ...response, headers: { ...response.headers, [REPLAYED_HEADER]: 'true' } }
      }

      // The transfer happens here; its outcome is stored in the same transaction.
      let outcome
      try {
        outcome = await op.execute((result) => keys.complete(scope, claim.owner, result))
      } catch (error) {
        if (error instanceof ClaimLostError) return claimLost()
        keys.release(scope, claim.owner)
        throw error
      }
      if (outcome.status >= 500) keys.release(scope, claim.owner)
      return outcome
    },
  }
}
