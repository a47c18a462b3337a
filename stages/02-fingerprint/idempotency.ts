// Stage 2: a key may only ever stand for one request body.
//
// This is stage 1's layer: the key is claimed before the transfer, and a
// duplicate is told "already processed". But a duplicate is anything with the
// same key: a teller who corrects ₩200,000 to ₩300,000 and submits again with
// the same key hears "already processed", and the ₩300,000 never moves. Your
// job: store a fingerprint of the body with the claim, and refuse a different
// body under a used key with 422.
//
// What you will need (import them at the top when you use them):
//   fingerprint         from './fingerprint.ts'            (you write it)
//   keyReused, notIJson from '#bank/idempotencyAnswers.ts' (the 422 and 400 answers, given)
import { alreadyProcessed } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer, Operation, Outcome } from '#bank/layer.ts'
import { parseIdempotencyKey } from '#given/01-unique-key/keyHeader.ts'
import { createKeyStore } from './keyStore.ts'

/** What identifies a request: its key and its fingerprint. Or the 400 to answer with. */
export function identify(op: Operation): { key: string; fingerprint: string } | Outcome {
  const key = parseIdempotencyKey(op.idempotencyKey)
  if (typeof key !== 'string') return key
  // TODO 1: fingerprint the parsed body, fingerprint(op.payload), instead of
  // this empty placeholder. If it throws (a lone surrogate is not I-JSON),
  // return notIJson((error as Error).message): a 400 problem.
  return { key, fingerprint: '' }
}

export const createLayer: CreateLayer = ({ db }) => {
  const keys = createKeyStore(db)
  return {
    async handle(op) {
      const request = identify(op)
      if ('status' in request) return request

      // TODO 2: claim the key WITH the fingerprint:
      // keys.claim(request.key, request.fingerprint). On a duplicate, compare
      // the fingerprint stored by the first request with this one:
      //  - the same: a genuine retry, alreadyProcessed(request.key) as before;
      //  - different: the key is being reused for another request: keyReused(), a 422.
      if (!keys.claim(request.key)) return alreadyProcessed(request.key)

      // The transfer happens here, once per key.
      return op.execute()
    },
  }
}
