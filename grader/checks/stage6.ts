// Stage 6: the layer on PostgreSQL, for several instances at once.
//
// Every instance here is a separate bank process on one database of the
// grade's PostgreSQL (harness/postgres.ts). Each check holds the cores shut
// (heldBurst, holdInCore) so that what a layer lets through waits in a core
// and what it turns away is answered: the verdicts never depend on timing.
import { setTimeout as sleep } from 'node:timers/promises'
import { phrases } from '#harness/i18n/phrase.ts'
import { expectEqual, fail, type Check } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'
import { decidedInside, elapsed, firstOutside, lastInside, momentOf } from './timeline.ts'
import { newRows, openParties } from './setup.ts'
import { heldBurst } from './heldBurst.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { expectReplayOf } from './replies.ts'
import { expectRetryAfterLeft } from './retryAfter.ts'
import { stage6Contention } from './stage6Contention.ts'
import { expectInFlight, moreInstances } from './stage6Instances.ts'
import { stage6Purge } from './stage6Purge.ts'
import { stage6Takeover } from './stage6Takeover.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage6.<key>).
const say = phrases('stage6', {
  copiesReached: '{copies} simultaneous copies of one request over 3 instances: {reached} reached the core, 1 may',
  oneInCore: '1 copy in the core, every other one answered 409',
  inCore: '{reached} in the core',
  simultaneousCopy: 'a simultaneous copy',
  retryOther: 'a retry through another instance',
  beforeLeaseOut: "a retry {after} after the claim, before the crashed holder's {leaseMs} ms lease ran out",
  lateFirstRetry: 'the first retry came after the lease could have ended (slow machine): only the takeover was judged',
  mustTakeOver: "a retry {after} after the claim, when the crashed holder's {leaseMs} ms lease had run out, must take the key over and execute",
  intoTakeoverLease: 'a retry {after} into the {leaseMs} ms lease of the instance that took the key over',
  lateTakeoverRetry: 'the retry during the takeover came after its lease could have ended (slow machine): not judged',
  takeoverCompletes: 'the retry that took the key over completes once its core is released',
  ahead: 'the instance 30 s ahead',
  behind: 'the instance 30 s behind, which holds the claim',
  duplicateInto: 'a duplicate through {where}, {after} into a {leaseMs} ms lease',
  heldCompletes: 'the held transfer completes once its core is released',
  lateRetry: 'the retry came {after} after the claim, past the TTL itself (slow machine): not judged',
  retryAhead: 'a retry {after} after the claim (TTL {ttlMs} ms) through the instance 30 s ahead',
  expiryByDatabase:
    "a retry {after} after the claim, when its {ttlMs} ms TTL had run out by the database's clock, through the instance 30 s behind, was not executed as new: expiry must be decided by now() in the database",
  secondRow: 'HTTP 201 and a second ledger row',
  rows: 'HTTP {status}, {rows} ledger row(s)',
  poolStarved:
    '{held} transfers with distinct keys, core held, pool of {poolMax}: only {inflight} reached the core; the others wait for a connection that the held ones keep',
  poolKept:
    "with {held} transfers held in the core and a pool of {poolMax}, their duplicates got no answer in 10 s: the held requests keep the pool's connections",
  each409: '409 for each duplicate, at once',
  duplicateOfHeld: 'a duplicate of a held transfer',
  eachCompletes: 'each held transfer completes once the core is released',
  intentsRows: '{held} intents, {held} ledger rows',
})

const threeInstances: Check = {
  id: 'three-instances-execute-once',
  title: 'Simultaneous duplicates spread over three instances on one database execute once',
  points: 10,
  hint: 'The claim must be visible to every instance before the core is called: commit it in its own short statement (INSERT … ON CONFLICT DO NOTHING RETURNING), not inside the money transaction, and never let a 23505 abort a transaction you still use.',
  timeoutMs: 90_000,
  async run(ctx) {
    const banks = [ctx.bank, ...(await moreInstances(ctx, 2))]
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a!, b!)
    const before = await ctx.bank.ledger()
    const copies = ctx.rng.int(6, 12)
    // Round-robin, as a balancer would: copy i goes to instance i mod 3.
    const groups = banks.map((bank, i) => ({
      bank,
      specs: Array.from({ length: copies }, (_, j) => j)
        .filter((j) => j % banks.length === i)
        .map(() => bank.postSpec(a!.customer, '/transfers', body, { key })),
    }))
    const { replies, reachedCore } = await heldBurst(groups)
    if (reachedCore !== 1)
      fail(say('copiesReached', { copies, reached: reachedCore }), {
        expected: say('oneInCore'),
        got: say('inCore', { reached: reachedCore }),
      })
    const winner = replies.find((r) => r.status === 201)
    for (const reply of replies) if (reply !== winner) expectInFlight(reply, say('simultaneousCopy'))
    await expectExactlyOnce(ctx.bank, before, body, winner)
    // Every instance now answers the retry from the one stored response.
    for (const bank of banks) expectReplayOf(winner!, await bank.send(bank.postSpec(a!.customer, '/transfers', body, { key })), say('retryOther'))
  },
}

const LEASE_MS = 2_000
/** The instance that takes over holds its lease this long: long enough that the retry during its transfer is judged on any machine. */
const TAKEOVER_LEASE_MS = 10_000

const crashTakeover: Check = {
  id: 'crash-then-takeover',
  title: 'SIGKILL of the instance holding a claim: a retry through another instance waits for the lease, then takes the key over, once',
  points: 10,
  hint: 'A crashed instance never completes or releases its claim: only its lease, measured by the database (now()), lets another instance take the key over, and only once it has run out. The takeover starts a lease of its own (now() + the lease), or the next retry takes the key over again.',
  timeoutMs: 90_000,
  timed: true,
  async run(ctx) {
    const [holder] = await moreInstances(ctx, 1, { leaseMs: LEASE_MS })
    const [other] = await moreInstances(ctx, 1, { leaseMs: TAKEOVER_LEASE_MS })
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a!, b!)
    const before = await ctx.bank.ledger()
    const { at: claim } = await momentOf(ctx.clock, () => holdInCore(holder!, () => holder!.transfer(a!.customer, body, { key })))
    await holder!.server.crash()
    // At the lease's last millisecond (on a real clock, at once, judged only if answered in time): another instance must refuse.
    const earlyAt = lastInside(ctx.clock, claim, LEASE_MS, LEASE_MS)
    await ctx.clock.moveTo(earlyAt)
    const early = await momentOf(ctx.clock, () => other!.transfer(a!.customer, body, { key }))
    if (decidedInside(ctx.clock, claim, LEASE_MS, early.at.to))
      expectInFlight(early.value, say('beforeLeaseOut', { after: elapsed(claim, earlyAt), leaseMs: LEASE_MS }))
    else ctx.note(say('lateFirstRetry'))
    // At the lease's end: the retry takes the key over.
    await ctx.clock.moveTo(firstOutside(ctx.clock, claim, LEASE_MS, 0))
    await other!.core({ hold: true })
    let late!: Promise<Reply>
    try {
      const { at: taken, value: verdict } = await momentOf(ctx.clock, () => {
        late = pending(other!.transfer(a!.customer, body, { key }))
        return answeredOrInCore(
          other!,
          late.then((r) => [r]),
          0,
          15_000,
        )
      })
      if ('answered' in verdict)
        fail(courseRule('lease', say('mustTakeOver', { after: elapsed(claim, taken.from), leaseMs: LEASE_MS })), {
          exchange: verdict.answered[0]!.exchange,
          got: `HTTP ${verdict.answered[0]!.status}`,
        })
      // The new holder's lease runs from its takeover: a retry at its last millisecond must be refused.
      const thirdAt = lastInside(ctx.clock, taken, TAKEOVER_LEASE_MS, TAKEOVER_LEASE_MS)
      await ctx.clock.moveTo(thirdAt)
      const third = await momentOf(ctx.clock, () => ctx.bank.transfer(a!.customer, body, { key }))
      if (decidedInside(ctx.clock, taken, TAKEOVER_LEASE_MS, third.at.to))
        expectInFlight(third.value, say('intoTakeoverLease', { after: elapsed(taken, thirdAt), leaseMs: TAKEOVER_LEASE_MS }))
      else ctx.note(say('lateTakeoverRetry'))
    } finally {
      await other!.core({ hold: false })
    }
    const done = await late
    expectEqual(done.status, 201, say('takeoverCompletes'), done.exchange)
    await expectExactlyOnce(ctx.bank, before, body, done)
  },
}

/**
 * Far apart enough that an instance's own clock would end the lease, and the
 * key, at once: to the instance 30 s ahead, a lease of 20 s and a TTL of 25 s
 * are over before they began. The TTL still leaves the check 25 s, by the
 * database, from the claim to the last retry.
 */
const SKEW_MS = 30_000
const SKEWED_LEASE_MS = 20_000
const SKEWED_TTL_MS = 25_000

const skewedClocks: Check = {
  id: 'skewed-clocks',
  title: 'Instances whose clocks are 60 s apart agree on leases, the lease left (Retry-After) and expiry, because the database decides',
  points: 10,
  hint: "Compute lease_until and expires_at, compare them, and count the lease left for Retry-After, with the database's now(): never with Date.now() of the instance, which may be tens of seconds off.",
  timeoutMs: 90_000,
  timed: true,
  async run(ctx) {
    const settings = { leaseMs: SKEWED_LEASE_MS, keyTtlMs: SKEWED_TTL_MS }
    const [behind] = await moreInstances(ctx, 1, { ...settings, clockOffsetMs: -SKEW_MS })
    const [ahead] = await moreInstances(ctx, 1, { ...settings, clockOffsetMs: SKEW_MS })
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a!, b!)
    const before = await ctx.bank.ledger()
    const { at: claimedAt, value: held } = await momentOf(ctx.clock, () => holdInCore(behind!, () => behind!.transfer(a!.customer, body, { key })))
    const claim = { leaseMs: SKEWED_LEASE_MS, at: claimedAt }
    const instances = [
      [ahead!, say('ahead')],
      [behind!, say('behind')],
    ] as const
    try {
      // The lease has 20 s to go by the database: the instance 30 s ahead must not see it as over, nor either one
      // tell a client to come back later (or sooner) than the lease says. At once, and on a controlled clock at the lease's last millisecond.
      const moments = ctx.clock.controlled ? [claimedAt.to, lastInside(ctx.clock, claimedAt, SKEWED_LEASE_MS, 0)] : [claimedAt.to]
      for (const at of moments) {
        await ctx.clock.moveTo(at)
        for (const [bank, where] of instances) {
          const duplicate = await momentOf(ctx.clock, () => bank.transfer(a!.customer, body, { key }))
          const what = say('duplicateInto', { where, after: elapsed(claimedAt, duplicate.at.from), leaseMs: SKEWED_LEASE_MS })
          expectInFlight(duplicate.value, what)
          expectRetryAfterLeft(duplicate.value, claim, duplicate.at, what)
        }
      }
    } finally {
      await behind!.core({ hold: false })
    }
    const first = await held.reply
    expectEqual(first.status, 201, say('heldCompletes'), first.exchange)
    // The key lives 25 s by the database; by the clock of the instance ahead, it expired before it was made.
    const aliveAt = lastInside(ctx.clock, claimedAt, SKEWED_TTL_MS, SKEWED_TTL_MS)
    await ctx.clock.moveTo(aliveAt)
    const retry = await momentOf(ctx.clock, () => ahead!.transfer(a!.customer, body, { key }))
    if (!decidedInside(ctx.clock, claimedAt, SKEWED_TTL_MS, retry.at.to)) ctx.note(say('lateRetry', { after: elapsed(claimedAt, retry.at.to) }))
    else expectReplayOf(first, retry.value, say('retryAhead', { after: elapsed(claimedAt, aliveAt), ttlMs: SKEWED_TTL_MS }))
    await expectExactlyOnce(ctx.bank, before, body, first)
    if (!ctx.clock.controlled) return
    // At the TTL's end by the database, the key is gone, also for the instance 30 s behind, whose own clock gives it 30 s more.
    const goneAt = firstOutside(ctx.clock, claimedAt, SKEWED_TTL_MS, 0)
    await ctx.clock.moveTo(goneAt)
    const anew = await behind!.transfer(a!.customer, body, { key })
    const rows = newRows(before, await ctx.bank.ledger()).filter((e) => e.from === body.from && e.to === body.to)
    if (anew.status !== 201 || rows.length !== 2)
      fail(courseRule('expiry', say('expiryByDatabase', { after: elapsed(claimedAt, goneAt), ttlMs: SKEWED_TTL_MS })), {
        exchange: anew.exchange,
        expected: say('secondRow'),
        got: say('rows', { status: anew.status, rows: rows.length }),
      })
  },
}

const POOL_MAX = 2
const HELD = 4

const smallPool: Check = {
  id: 'small-pool-answers-duplicates',
  title: `A pool of ${POOL_MAX} connections with ${HELD} transfers held in the core: duplicates still get 409 at once`,
  points: 10,
  hint: 'No transaction, and no pooled connection, may be held while op.execute() waits for the core: claim and commit first, then call the core, then open the money transaction.',
  timeoutMs: 90_000,
  async run(ctx) {
    const [bank] = await moreInstances(ctx, 1, { poolMax: POOL_MAX })
    const parties = await openParties(ctx, 2)
    const before = await bank!.ledger()
    // All from one account: HELD of plan()'s amounts fit its opening balance, so a correct bank executes each.
    const intents = Array.from({ length: HELD }, () => plan(ctx, parties[0]!, parties[1]!))
    await bank!.core({ hold: true })
    try {
      const firsts = intents.map(({ body, key }) => pending(bank!.transfer(parties[0]!.customer, body, { key })))
      const deadline = Date.now() + 15_000
      for (;;) {
        const { inflight } = await bank!.core({})
        if (inflight === HELD) break
        if (Date.now() > deadline) fail(say('poolStarved', { held: HELD, poolMax: POOL_MAX, inflight }))
        await sleep(25)
      }
      const answered = await Promise.race([
        Promise.all(intents.map(({ body, key }) => bank!.transfer(parties[0]!.customer, body, { key }))),
        sleep(10_000).then(() => undefined),
      ])
      if (!answered) fail(say('poolKept', { held: HELD, poolMax: POOL_MAX }), { expected: say('each409') })
      for (const reply of answered) expectInFlight(reply, say('duplicateOfHeld'))
      await bank!.core({ hold: false })
      for (const reply of await Promise.all(firsts)) expectEqual(reply.status, 201, say('eachCompletes'), reply.exchange)
    } finally {
      await bank!.core({ hold: false }).catch(() => undefined)
    }
    expectEqual(newRows(before, await bank!.ledger()).length, HELD, say('intentsRows', { held: HELD }))
  },
}

export const stage6: Check[] = [threeInstances, crashTakeover, ...stage6Takeover, skewedClocks, smallPool, ...stage6Contention, ...stage6Purge]
