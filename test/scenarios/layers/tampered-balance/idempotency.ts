// A wrong layer: the money moves correctly, but the 201 body claims a balance
// 1,000 won higher than the truth.
import type { CreateLayer } from '#bank/layer.ts'

export const createLayer: CreateLayer = () => ({
  async handle(op) {
    const outcome = await op.execute()
    if (outcome.status !== 201) return outcome
    const body = JSON.parse(outcome.body) as { balanceAfter: number }
    body.balanceAfter += 1_000
    return { ...outcome, body: JSON.stringify(body) }
  },
})
