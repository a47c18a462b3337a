// Stage 0 has no idempotency layer: every POST /transfers executes, retries
// included. Learners read this file; the exercise is suspectedDuplicates.ts.
import type { CreateLayer } from '#bank/layer.ts'

export const createLayer: CreateLayer = () => ({
  // The transfer happens here, every time it is asked for.
  handle: (op) => op.execute(),
})
