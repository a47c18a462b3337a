// Stage 1: claim the key before the transfer runs.
//
// Every POST /transfers (and /deposits) passes through handle(). Today it
// executes every request, retries included: that is stage 0's bank, and the
// duplicates you found in its ledger. Read it top to bottom: the TODOs mark
// where the key is read and where it is claimed, just before the transfer.
//
// What you will need (import them at the top when you use them):
//   parseIdempotencyKey  from './keyHeader.ts'              (you write it)
//   createKeyStore       from './keyStore.ts'               (you write it)
//   alreadyProcessed     from '#bank/idempotencyAnswers.ts' (the duplicate's answer, given)
import type { CreateLayer } from '#bank/layer.ts'

// TODO 1: take the database, `({ db }) =>`, and create the key store once,
// here, before `return`: `const keys = createKeyStore(db)`.
export const createLayer: CreateLayer = () => {
  return {
    async handle(op) {
      // TODO 2: read the key: `const key = parseIdempotencyKey(op.idempotencyKey)`.
      // When it is not a string, it is the 400 problem to answer: return it.

      // TODO 3: claim the key BEFORE the transfer: `keys.claim(key)`. If the
      // claim fails, another request already owns this key: do not execute,
      // return alreadyProcessed(key) instead.

      // The transfer happens here. Right now: for every request, every retry.
      return op.execute()
    },
  }
}
