// Stage 6: retries through several instances that find the same expired
// lease at once. Each one reads the row, sees the lease over, and writes the
// takeover; only a compare-and-set (UPDATE … WHERE owner = the one it read AND
// lease_until <= now()) lets exactly one of them win.
//
// The race is made certain, not hoped for: the grader locks the key's row
// itself (FOR UPDATE, in its own transaction), lets the retries in, waits
// until every takeover write is queued behind that lock, and only then lets
// go. Each queued write then runs after the one before it committed: a
// guarded one finds the owner changed and takes nothing, an unguarded one
// takes the key from the retry that just took it.
import { expectEqual, fail, type Check } from '../engine/check.ts'
import { phrases } from '#harness/i18n/phrase.ts'
import type { Reply } from '#harness/http.ts'
import { firstOutside, momentOf } from './timeline.ts'
import { expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { connectToDatabase, lockRowsHolding, lockWaiters } from './layerDatabase.ts'
import { openParties } from './setup.ts'
import { expectInFlight, moreInstances, waitFor } from './stage6Instances.ts'

const LEASE_MS = 1_500
/** The takers' own lease: long enough that the losers are judged while the winner still holds it, on any machine. */
const TAKER_LEASE_MS = 30_000

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage6Takeover.<key>).
const say = phrases('stage6Takeover', {
  keyNotStored: "no row of the layer's tables holds the key {key} of the crashed instance's claim: store each key as the client sent it",
  retries: 'retries',
  queuedBehindLock: 'queued behind the lock',
  reachedCore: 'reached a core',
  tookOver: '{retries} retries found the expired lease at once and {took} of them took the key over: each went on to execute',
  atMostOne: 'at most one takeover; every other retry answered 409 request-in-flight',
  inCores: '{took} retries in the cores',
  lostRace: 'a retry that lost the race to take the key over',
  tookNote: '{took} of {retries} simultaneous retries took the expired claim over',
  winnerCompletes: 'the retry that took the key over completes once its core is released',
})

const simultaneousTakeovers: Check = {
  id: 'simultaneous-takeovers-once',
  title: 'Retries through three instances that find the same expired lease at once: one takes the key over, the others get 409',
  points: 10,
  hint: 'Take an expired claim over with a compare-and-set: UPDATE … SET owner = yours, lease_until = now() + lease WHERE the key AND owner = the owner you read AND lease_until <= now(), and count the rows it changed. Another instance may have taken the key over between your SELECT and your UPDATE.',
  timeoutMs: 90_000,
  // It locks the key's row itself, on the grade's database.
  needs: 'database',
  timed: true,
  async run(ctx) {
    const [holder] = await moreInstances(ctx, 1, { leaseMs: LEASE_MS })
    const takers = await moreInstances(ctx, 3, { leaseMs: TAKER_LEASE_MS })
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a!, b!)
    const before = await ctx.bank.ledger()
    const { at: claim } = await momentOf(ctx.clock, () => holdInCore(holder!, () => holder!.transfer(a!.customer, body, { key })))
    await holder!.server.crash()
    // The crashed holder's lease is over from here on.
    await ctx.clock.moveTo(firstOutside(ctx.clock, claim, LEASE_MS, 0))

    const locker = await connectToDatabase(ctx.bank)
    const watcher = await connectToDatabase(ctx.bank)
    const release = () => Promise.all(takers.map((t) => t.core({ hold: false })))
    let replies: Array<Promise<Reply>> = []
    try {
      await Promise.all(takers.map((t) => t.core({ hold: true })))
      await locker.query('BEGIN')
      if ((await lockRowsHolding(locker, key)) === 0) fail(say('keyNotStored', { key }))
      const answers: Reply[] = []
      const inCore = async () => (await Promise.all(takers.map((t) => t.core({})))).reduce((n, s) => n + s.inflight, 0)
      replies = takers.map((t) =>
        pending(
          t.transfer(a!.customer, body, { key }).then((reply) => {
            answers.push(reply)
            return reply
          }),
        ),
      )
      // Each retry has read the expired row and waits to write its takeover (or was answered, or is in a core).
      await waitFor(takers.length, say('retries'), say('queuedBehindLock'), async () => answers.length + (await inCore()) + (await lockWaiters(watcher)))
      await locker.query('ROLLBACK')
      await waitFor(takers.length, say('retries'), say('reachedCore'), async () => answers.length + (await inCore()))
      const took = await inCore()
      if (took > 1)
        fail(say('tookOver', { retries: takers.length, took }), {
          expected: say('atMostOne'),
          got: say('inCores', { took }),
        })
      for (const reply of answers) expectInFlight(reply, say('lostRace'))
      ctx.note(say('tookNote', { took, retries: takers.length }))
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined)
      await Promise.all([locker.end(), watcher.end()])
      await release().catch(() => undefined)
    }
    // The winner completes; with no winner (every retry refused), one more retry executes.
    const winner = (await Promise.all(replies)).find((r) => r.status === 201) ?? (await takers[0]!.transfer(a!.customer, body, { key }))
    expectEqual(winner.status, 201, say('winnerCompletes'), winner.exchange)
    await expectExactlyOnce(ctx.bank, before, body, winner)
  },
}

export const stage6Takeover: Check[] = [simultaneousTakeovers]
