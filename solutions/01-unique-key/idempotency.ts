// Stage 1: claim the key before the transfer runs.
//
// Every POST /transfers (and /deposits) passes through handle(). Read it top
// to bottom: the key is read, then claimed with an INSERT, and only the request
// that won the claim executes the transfer.
import { alreadyProcessed } from '#bank/idempotencyAnswers.ts'
import type { CreateLayer } from '#bank/layer.ts'
import { parseIdempotencyKey } from './keyHeader.ts'
import { createKeyStore } from './keyStore.ts'

export const createLayer: CreateLayer = ({ db }) => {
  const keys = createKeyStore(db)
  return {
    async handle(op) {
      const key = parseIdempotencyKey(op.idempotencyKey)
      if (typeof key !== 'string') return key // 400: missing or malformed

      // The claim comes first. If the INSERT fails, this is a duplicate and
      // must not execute. What it answers is not good enough yet: it cannot
      // tell an amended request from a retry (stage 2), a finished request
      // from one still running or crashed (stage 3), or give back the result
      // (stage 4).
      if (!keys.claim(key)) return alreadyProcessed(key)

      // The transfer happens here, once per key.
      return op.execute()
    },
  }
}
