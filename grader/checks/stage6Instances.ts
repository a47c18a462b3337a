// What stage 6's checks share: more instances of the graded stage on the one
// database, and the one answer a duplicate of a request in flight may get.
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Settings } from '#bank/config.ts'
import type { BankClient } from '#harness/bankClient.ts'
import type { Reply } from '#harness/http.ts'
import { expectProblem, fail, type CheckContext } from '../engine/check.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage6Instances.<key>).
const say = phrases('stage6Instances', {
  must409: '{what} must be answered 409 (in flight) while the first one holds the key',
  inFlightProblem: '{what}: expected the request-in-flight problem',
  notAccounted: '{total} {what}, after 15 s only {n} had been answered or {state}',
})

/** `count` more instances of the graded stage on the default instance's database. */
export async function moreInstances(ctx: CheckContext, count: number, settings: Partial<Settings> = {}): Promise<BankClient[]> {
  const banks: BankClient[] = []
  for (let i = 0; i < count; i++) banks.push(await ctx.startServer({ sameDatabase: true, settings }))
  return banks
}

/** A duplicate turned away while the first request is in flight: 409 request-in-flight, nothing else. */
export function expectInFlight(reply: Reply, what: Line): void {
  expectProblem(reply, 409, say('must409', { what }))
  if (reply.json?.type !== '/problems/request-in-flight')
    fail(say('inFlightProblem', { what }), {
      exchange: reply.exchange,
      expected: '/problems/request-in-flight',
      got: String(reply.json?.type),
    })
}

/** Polls `count()` (how many of `total` requests are accounted for) until it covers them all; fails after 15 s. */
export async function waitFor(total: number, what: Line, state: Line, count: () => Promise<number>): Promise<void> {
  const deadline = Date.now() + 15_000
  for (;;) {
    const n = await count()
    if (n >= total) return
    if (Date.now() > deadline) fail(say('notAccounted', { total, what, n, state }))
    await sleep(25)
  }
}
