// Simultaneous requests whose outcome does not depend on luck.
//
// The cores of the target instances are held shut, then every request is
// fired at the same instant (bank.burst: separate connections, one write
// loop). A request the layer lets through waits inside the core; one it turns
// away is answered. Once answered + inflight covers every request, the layers
// have made all their decisions, and only then is the core released. So a
// layer that lets two requests through is caught every run, not when the
// scheduler happens to interleave them.
import { setTimeout as sleep } from 'node:timers/promises'
import type { BankClient } from '#harness/bankClient.ts'
import { fail } from '../engine/check.ts'
import { phrases } from '#harness/i18n/phrase.ts'
import type { Reply, RequestSpec } from '#harness/http.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": heldBurst.<key>).
const say = phrases('heldBurst', {
  stuck:
    '{total} simultaneous requests, core held: after {timeoutMs} ms only {answered} were answered and {reachedCore} reached the core; the other {stuck} are stuck in the layer. A duplicate must be answered at once, not wait for the first request.',
})

export type BurstGroup = { bank: BankClient; specs: RequestSpec[] }
export type HeldBurst = { replies: Reply[]; reachedCore: number }

export async function heldBurst(groups: BurstGroup[], timeoutMs = 10_000): Promise<HeldBurst> {
  const total = groups.reduce((n, g) => n + g.specs.length, 0)
  let answered = 0
  const release = () => Promise.all(groups.map((g) => g.bank.core({ hold: false })))
  await Promise.all(groups.map((g) => g.bank.core({ hold: true })))
  try {
    const all = Promise.all(groups.map((g) => g.bank.burst(g.specs, () => answered++)))
    all.catch(() => undefined) // awaited below, unless the wait fails first
    const deadline = Date.now() + timeoutMs
    let reachedCore = 0
    for (;;) {
      const states = await Promise.all(groups.map((g) => g.bank.core({})))
      reachedCore = states.reduce((n, s) => n + s.inflight, 0)
      if (answered + reachedCore >= total) break
      if (Date.now() > deadline) fail(say('stuck', { total, timeoutMs, answered, reachedCore, stuck: total - answered - reachedCore }))
      await sleep(20)
    }
    await release()
    return { replies: (await all).flat(), reachedCore }
  } finally {
    await release().catch(() => undefined)
  }
}
