// Stage 5: keys scoped per client and route, remembered for a published time.
//
// The flow is stage 4's, and it already works for one client on one route.
// What changes is what a key *is*: the triple (client, route, key), so no
// client can ever receive, or even detect, the result of another client's
// request; and how long it lives: LAB_KEY_TTL_MS after the first request,
// announced on every response in the Idempotency-Key-Policy header.
import { keyReused, requestInFlight } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer } from '#bank/layer.ts'
import { identify } from '#given/02-fingerprint/identify.ts'
import { executeClaimed } from '#given/03-in-progress/executeClaimed.ts'
import { replay } from '#given/04-replay/replay.ts'
import { createKeyStore } from './keyStore.ts'

export const createLayer: CreateLayer = ({ db, config }) => {
  const keys = createKeyStore(db, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })
  return {
    // TODO (policy): publish the retention, machine-readable, on every response:
    //   policyHeaders: { 'Idempotency-Key-Policy': 'ttl=<s>, lease=<s>, scope="client route"' }
    // with ttl = config.keyTtlMs in whole seconds rounded down (never promise
    // more than we keep) and lease = config.leaseMs in whole seconds rounded up.
    async handle(op) {
      const request = identify(op)
      if ('status' in request) return request

      // The scope: who sent it and where, not only the string they chose.
      // TODO (scope): these placeholders put every client and every route in
      // one key space, as in stage 4. Use op.clientId and op.route (e.g.
      // 'POST /transfers') instead, and key the table on all three in keyStore.ts.
      const scope = { clientId: '(every client)', route: '(every route)', key: request.key }
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
