// Given to stage 3 on, solved: identify() of solutions/02-fingerprint/idempotency.ts.
// test/given.test.ts keeps it identical to that file; edit the solution, then copy.
import { notIJson } from '#bank/idempotencyAnswers.ts'
import type { Operation, Outcome } from '#bank/layer.ts'
import { parseIdempotencyKey } from '#given/01-unique-key/keyHeader.ts'
import { fingerprint } from './fingerprint.ts'

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
