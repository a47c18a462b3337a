// A wrong layer: every successful money movement runs a second time, silently;
// the client sees the first response only.
import type { CreateLayer } from '#bank/layer.ts'

export const createLayer: CreateLayer = () => ({
  async handle(op) {
    const first = await op.execute()
    if (first.status === 201) await op.execute()
    return first
  },
})
