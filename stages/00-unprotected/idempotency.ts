// Stage 0 has no idempotency layer: every POST /transfers executes, retries
// included. Read it, then read stage 1, where this file starts to matter.
import type { CreateLayer } from '#bank/layer.ts'

export const createLayer: CreateLayer = () => ({
  // The transfer happens here, every time it is asked for.
  handle: (op) => op.execute(),
})
