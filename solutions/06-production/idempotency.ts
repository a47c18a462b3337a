// Stage 6: stage 5's layer on PostgreSQL, for several instances at once.
//
// The flow is stage 5's. What changes is where each step runs:
// 1. the claim: its own short transaction (keyStore.claim), committed before
//    the core is called, so every instance sees it;
// 2. the core call: no transaction and no pooled connection held, so slow
//    transfers cannot starve the pool and duplicates are answered at once;
// 3. the money and the completion: one transaction (op.execute's `tx`), with
//    the owner check, so a request that lost its lease moves no money.
import { claimLost, keyReused, requestInFlight } from '#bank/idempotencyAnswers.ts'
import { ClaimLostError } from '#bank/keyClaims.ts'
import type { CreateLayer, Outcome, Postgres } from '#bank/layer.ts'
import { identify } from '#given/02-fingerprint/identify.ts'
import { replay } from '#given/04-replay/replay.ts'
import { createKeyStore } from './keyStore.ts'

export const createLayer: CreateLayer<Postgres> = async ({ pool, config }) => {
  const keys = await createKeyStore(pool, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })
  return {
    policyHeaders: {
      'Idempotency-Key-Policy': `ttl=${Math.floor(config.keyTtlMs / 1000)}, lease=${Math.ceil(config.leaseMs / 1000)}, scope="client route"`,
    },
    async handle(op) {
      const request = identify(op)
      if ('status' in request) return request

      const scope = { clientId: op.clientId, route: op.route, key: request.key }
      const claim = await keys.claim(scope, request.fingerprint)
      if (claim.kind === 'mismatch') return keyReused()
      if (claim.kind === 'in-flight') return requestInFlight(claim.retryAfterMs / 1000)
      if (claim.kind === 'completed') return replay(claim.response)

      let outcome: Outcome
      try {
        outcome = await op.execute((result, tx) => keys.complete(tx, scope, claim.owner, result))
      } catch (error) {
        // Our lease ran out and a retry owns the key now: it moves the money, we must not.
        if (error instanceof ClaimLostError) return claimLost()
        await keys.release(scope, claim.owner)
        throw error
      }
      // A 5xx: the core failed and nothing committed; give the key back so the retry executes.
      if (outcome.status >= 500) await keys.release(scope, claim.owner)
      return outcome
    },
  }
}
