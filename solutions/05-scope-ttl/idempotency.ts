// Stage 5: keys scoped per client and route, remembered for a published time.
//
// The flow is stage 4's. What changes is what a key *is*: the triple
// (client, route, key), so no client can ever receive, or even detect, the
// result of another client's request; and how long it lives: LAB_KEY_TTL_MS
// after the first request, announced on every response in the
// Idempotency-Key-Policy header.
import { keyReused, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer } from '#bank/layer.ts'
import { identify } from '#given/02-fingerprint/identify.ts'
import { executeClaimed } from '#given/03-in-progress/executeClaimed.ts'
import { replay } from '#given/04-replay/replay.ts'
import { createKeyStore } from './keyStore.ts'

export const createLayer: CreateLayer = ({ db, config }) => {
  const keys = createKeyStore(db, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })
  return {
    // Machine-readable retention (seconds), so clients can size their retry horizon.
    policyHeaders: {
      'Idempotency-Key-Policy': `ttl=${Math.floor(config.keyTtlMs / 1000)}, lease=${Math.ceil(config.leaseMs / 1000)}, scope="client route"`,
    },
    async handle(op) {
      const request = identify(op)
      if ('status' in request) return request

      // The scope: who sent it and where, not only the string they chose.
      // op.route is the bank's name for the route (POST /transfers for
      // /TRANSFERS/ too); op.path, the URL as typed, would split one route in two.
      const scope = { clientId: op.clientId, route: op.route, key: request.key }
      const claim = keys.claim(scope, request.fingerprint)
      if (claim.kind === 'mismatch') return keyReused()
      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)
      if (claim.kind === 'completed') return replay(claim.response)

      // The transfer happens here; its outcome is stored in the same transaction.
      return executeClaimed(op, {
        complete: (outcome) => keys.complete(scope, claim.owner, outcome),
        release: () => keys.release(scope, claim.owner),
      })
    },
  }
}
