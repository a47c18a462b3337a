// Stage 6: the batch purge, run by one instance while another holds a claim.
import { setTimeout as sleep } from 'node:timers/promises'
import type { BankClient } from '#harness/bankClient.ts'
import { expectEqual, fail, type Check } from '../engine/check.ts'
import { phrases } from '#harness/i18n/phrase.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { GradeClock } from '#harness/gradeClock.ts'
import { CLOCK_SLACK_MS, decidedInside, firstOutside, lastInside, momentOf } from './timeline.ts'
import { describeRows, layerRows, totalRows } from './layerRows.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { freshKey, openParties } from './setup.ts'
import { expectInFlight, moreInstances } from './stage6Instances.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage6Purge.<key>).
const say = phrases('stage6Purge', {
  ownKeyExecutes: 'a deposit under a key of its own executes',
  keyNotStored: "no row of the layer's tables holds the key {key} just used: store each key as the client sent it",
  unrelatedExecutes: 'an unrelated deposit with a fresh key executes',
  lateDuplicate: 'the duplicate came after the lease could have ended (slow machine): not judged',
  claimDeleted:
    "a duplicate of a request in flight, past the key's TTL but within its lease, was let into the core: the claim was deleted (by the purge?) while its request still worked",
  inFlight409: '409 request-in-flight',
  executing: 'the duplicate executing in the core',
  pastTtl: 'a duplicate past the TTL, within the lease',
  heldCompletes: 'the held transfer completes once its core is released',
  notPurged: 'key {key} expired {ago} ago, a request came after that, and no purge has deleted its row: expired rows must be purged',
  aTtl: 'a TTL',
  overTtl: 'over {ttlMs} ms',
  rowDeleted: 'its row deleted by a purge (on a claim, or on a timer at least once per TTL)',
})

const TTL_MS = 1_000
/** Far beyond the TTL: the claim is expired and still leased for the whole check. */
const LEASE_MS = 30_000
/** The purging instance's clock runs ahead by more than the lease: by its own clock, the claim's lease is over. */
const PURGER_AHEAD_MS = LEASE_MS + 10_000

const purgeSparesLiveClaims: Check = {
  id: 'purge-spares-live-claims',
  title: 'A purge run by another instance, whose clock runs ahead, spares a claim still in flight past its TTL: its duplicate gets 409, the money moves once',
  points: 10,
  hint: "Purge expired rows (on a claim, or on a timer at least once per TTL), but delete a row only once no request can still work under it: expired, and completed or with its lease run out, both by the database's now() (the purging instance's clock here runs 40 s ahead). An expired claim whose lease is live is all that stops a duplicate.",
  timeoutMs: 90_000,
  // It sees that a purge ran in the layer's rows.
  needs: 'database',
  timed: true,
  async run(ctx) {
    const settings = { keyTtlMs: TTL_MS, leaseMs: LEASE_MS }
    // Started before the claim, so nothing it did has purged yet: its first request's claim is its first purge.
    const [holder] = await moreInstances(ctx, 1, settings)
    const [purger] = await moreInstances(ctx, 1, { ...settings, clockOffsetMs: PURGER_AHEAD_MS })
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a!, b!)
    const before = await ctx.bank.ledger()
    // A key done before the claim: once expired, any purge deletes its row, which proves a purge ran.
    const doneKey = freshKey(ctx)
    const done = await holder!.deposit(a!.customer, { to: a!.accounts[0]!, amount: ctx.rng.amount(1_000, 9_000) }, { key: doneKey })
    expectEqual(done.status, 201, say('ownKeyExecutes'), done.exchange)
    if (totalRows(await layerRows(holder!, doneKey)) === 0) fail(say('keyNotStored', { key: doneKey }))
    const { at: claim, value: held } = await momentOf(ctx.clock, () => holdInCore(holder!, () => holder!.transfer(a!.customer, body, { key })))
    try {
      // From the TTL's end on, the claim is expired but leased.
      await ctx.clock.moveTo(firstOutside(ctx.clock, claim, TTL_MS, 0))
      // A request of its own through the other instance, which purges the table (the reference solution purges on a claim).
      const own = await purger!.deposit(b!.customer, { to: b!.accounts[0]!, amount: ctx.rng.amount(1_000, 9_000) }, { key: freshKey(ctx) })
      expectEqual(own.status, 201, say('unrelatedExecutes'), own.exchange)
      // A lazy purge ran on that request; a purge on a timer (at least once per TTL) gets one more TTL, on every instance.
      await ctx.clock.advance(TTL_MS)
      await purgeRan(ctx.clock, holder!, doneKey)
      // The duplicate at the lease's last millisecond (on a real clock, at once, judged only if answered in time).
      await ctx.clock.moveTo(lastInside(ctx.clock, claim, LEASE_MS, LEASE_MS - 2 * TTL_MS))
      await purger!.core({ hold: true })
      const duplicate = pending(purger!.transfer(a!.customer, body, { key }))
      const verdict = await answeredOrInCore(
        purger!,
        duplicate.then((r) => [r]),
        0,
      )
      if (!decidedInside(ctx.clock, claim, LEASE_MS, ctx.clock.now())) ctx.note(say('lateDuplicate'))
      else if ('reachedCore' in verdict)
        fail(say('claimDeleted'), {
          expected: say('inFlight409'),
          got: say('executing'),
        })
      else expectInFlight(verdict.answered[0]!, say('pastTtl'))
    } finally {
      await purger!.core({ hold: false })
      await holder!.core({ hold: false })
    }
    const first = await held.reply
    expectEqual(first.status, 201, say('heldCompletes'), first.exchange)
    await expectExactlyOnce(ctx.bank, before, body, first)
  },
}

/**
 * That a purge has deleted the expired row of `doneKey` (waiting a little
 * more, for a timer late on a loaded machine). Without a purge there is
 * nothing to judge, and a table that is never purged is itself the fault.
 */
async function purgeRan(clock: GradeClock, bank: BankClient, doneKey: string): Promise<void> {
  // On a controlled clock the timers have fired: up to 10 real seconds are for their work (a loaded machine); on a real one, one more TTL.
  const deadline = Date.now() + (clock.controlled ? 10_000 : TTL_MS + CLOCK_SLACK_MS)
  for (;;) {
    const left = await layerRows(bank, doneKey)
    if (totalRows(left) === 0) return
    if (Date.now() > deadline)
      fail(courseRule('purge', say('notPurged', { key: doneKey, ago: clock.controlled ? say('aTtl') : say('overTtl', { ttlMs: TTL_MS }) })), {
        expected: say('rowDeleted'),
        got: describeRows(left),
      })
    await sleep(50)
  }
}

export const stage6Purge: Check[] = [purgeSparesLiveClaims]
