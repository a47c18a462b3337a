// Stage 2: a key may only ever stand for one request body.
//
// Same as stage 1, plus the fingerprint: it is stored with the claim, and a
// duplicate whose fingerprint differs is refused with 422 instead of being
// told "already processed".
import { alreadyProcessed, keyReused, notIJson } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer, Operation, Outcome } from '#bank/layer.ts'
import { parseIdempotencyKey } from '#given/01-unique-key/keyHeader.ts'
import { fingerprint } from './fingerprint.ts'
import { createKeyStore } from './keyStore.ts'

/** What identifies a request: its key and its fingerprint. Or the 400 to answer with. */
export function identify(op: Operation): { key: string; fingerprint: string } | Outcome {
  const key = parseIdempotencyKey(op.idempotencyKey)
  if (typeof key !== 'string') return key
  try {
    return { key, fingerprint: fingerprint(op.payload) }
  } catch (error) {
    return notIJson((error as Error).message)
  }
}

export const createLayer: CreateLayer = ({ db }) => {
  const keys = createKeyStore(db)
  return {
    async handle(op) {
      const request = identify(op)
      if ('status' in request) return request

      const claim = keys.claim(request.key, request.fingerprint)
      if (claim.kind === 'duplicate')
        // A different body under a used key is a client bug (a teller who
        // amended the amount): say so with 422 rather than pretend it worked.
        return claim.fingerprint === request.fingerprint ? alreadyProcessed(request.key) : keyReused()

      // The transfer happens here, once per key.
      return op.execute()
    },
  }
}
