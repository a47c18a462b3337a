// Stage 3, the lease at its boundaries: how long a claim really holds, what
// Retry-After says about it, and what a takeover may and may not do.
//
// Each check starts its own instance with a lease of a known length L and
// holds the first request in the core, so the claim's moment is bounded by
// two readings of the clock: after the request was sent, and before we saw it
// in the core. A probe is placed at a fraction of L from those bounds, far
// enough from the lease's end that no delay of a loaded machine can move it
// across; when a probe's own answer comes back too late to tell, the check
// says so instead of guessing.
import type { BankClient, TransferBody } from '../../harness/bankClient.ts'
import { expectProblem, expectStatus, fail, type Check, type CheckContext } from '../check.ts'
import type { Reply } from '../../harness/http.ts'
import { CLOCK_SLACK_MS, sleepUntil } from './clock.ts'
import { expectChangedBodyRefused, is2xx, newRows, openParties, type Party } from './setup.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { expectRetryAfterLeft } from './retryAfter.ts'

/** An instance with lease `leaseMs` and two funded customers. */
async function leaseBank(ctx: CheckContext, leaseMs: number) {
  const bank = await ctx.startServer({ env: { LAB_LEASE_MS: String(leaseMs) } })
  const [a, b] = await openParties(ctx, 2, 2, bank)
  return { bank, a, b }
}

/** A first request under a fresh key, held in the core; `send` resends under the same key. */
async function holdFirst(ctx: CheckContext, bank: BankClient, a: Party, b: Party) {
  const { body, key } = plan(ctx, a, b)
  const before = await bank.ledger()
  const sentAt = Date.now()
  const { reply: first } = await holdInCore(bank, () => bank.transfer(a.customer, body, { key }))
  // The claim was made in [sentAt, inCoreAt]; so its lease ends in [sentAt + L, inCoreAt + L].
  const claim = { sentAt, inCoreAt: Date.now() }
  const send = (other: TransferBody = body) => pending(bank.transfer(a.customer, other, { key }))
  return { body, key, before, first, claim, send }
}

/** An instance with lease `leaseMs`, two funded customers, and one held first request. */
async function heldClaim(ctx: CheckContext, leaseMs: number) {
  const { bank, a, b } = await leaseBank(ctx, leaseMs)
  return { bank, a, b, ...(await holdFirst(ctx, bank, a, b)) }
}

/** Sends one duplicate while the core is held: answered (refused) or in the core (executing). */
async function probe(bank: BankClient, reply: Promise<Reply>, inCore: number) {
  const sentAt = Date.now()
  const seen = await answeredOrInCore(
    bank,
    reply.then((r) => [r]),
    inCore,
  )
  return { sentAt, seenAt: Date.now(), seen }
}

const ROUNDS = 3

/**
 * Runs a round of a check whose probes must fall inside a lease; a round
 * returns 'inconclusive' when a probe was decided so late that the lease may
 * really have ended (a stalled machine), and is then run again on a fresh
 * key. Only a round that could tell decides the verdict.
 */
async function untilConclusive(ctx: CheckContext, round: () => Promise<'done' | 'inconclusive'>): Promise<void> {
  for (let attempt = 1; attempt <= ROUNDS; attempt++) {
    if ((await round()) === 'done') return
    ctx.note(`round ${attempt}: a probe was decided too late to tell (the machine stalled); again with a fresh key`)
  }
  fail(`in ${ROUNDS} rounds the server never answered a probe inside the lease in time: the machine is too slow to grade this`)
}

/** Lets every held request of an abandoned round finish. */
async function settle(bank: BankClient, replies: Array<Promise<Reply>>) {
  await bank.core({ hold: false })
  await Promise.allSettled(replies)
}

const LENGTH_MS = 4_000

const leaseLength: Check = {
  id: 'lease-length',
  title: 'A claim holds for LAB_LEASE_MS: a retry at a quarter of the lease gets 409, one just after it takes over',
  points: 4,
  hint: 'lease_until = claim time + LAB_LEASE_MS, both in milliseconds (config.leaseMs is already in ms; Date.now() too): no / 1000, no * 1000.',
  timeoutMs: 45_000,
  async run(ctx) {
    const { bank, a, b } = await leaseBank(ctx, LENGTH_MS)
    await untilConclusive(ctx, async () => {
      const { body, before, first, claim, send } = await holdFirst(ctx, bank, a, b)
      try {
        // Inside: a quarter of the lease after the claim. A lease a thousand times too short ran out long ago.
        await sleepUntil(claim.inCoreAt + LENGTH_MS / 4)
        const earlyReply = send()
        const early = await probe(bank, earlyReply, 1)
        if ('reachedCore' in early.seen) {
          if (early.seenAt >= claim.sentAt + LENGTH_MS - CLOCK_SLACK_MS) {
            await settle(bank, [first, earlyReply])
            return 'inconclusive'
          }
          fail(
            `a retry ${early.sentAt - claim.inCoreAt} ms after the claim took it over and is executing, although the lease is ${LENGTH_MS} ms: ` +
              'the lease is much shorter than LAB_LEASE_MS (is it divided by 1000 somewhere?)',
            { expected: 'HTTP 409 (the first request still holds its lease)', got: 'a second execution waiting in the core' },
          )
        }
        expectProblem(early.seen.answered[0]!, 409, `a retry ${early.sentAt - claim.inCoreAt} ms into a ${LENGTH_MS} ms lease gets 409`)

        // Outside: a tenth of the lease after its latest possible end. A lease a thousand times too long still holds.
        await sleepUntil(claim.inCoreAt + LENGTH_MS * 1.1)
        const late = send()
        const after = await probe(bank, late, 1)
        if ('answered' in after.seen) {
          const [reply] = after.seen.answered
          fail(
            `a retry ${after.sentAt - claim.inCoreAt} ms after the claim, past its ${LENGTH_MS} ms lease, was refused: ` +
              'the lease is much longer than LAB_LEASE_MS (is it multiplied by 1000, or never compared with the clock?)',
            { exchange: reply!.exchange, expected: 'the retry takes the expired claim over and executes', got: `HTTP ${reply!.status}` },
          )
        }
        await bank.core({ hold: false })
        const [, retry] = await Promise.all([first, late])
        expectStatus(retry, 201, 'the retry that took over the expired claim executes the transfer')
        await expectExactlyOnce(bank, before, body, retry)
        ctx.note(`lease ${LENGTH_MS} ms: 409 at ${early.sentAt - claim.inCoreAt} ms, taken over at ${after.sentAt - claim.inCoreAt} ms`)
        return 'done'
      } finally {
        await bank.core({ hold: false })
      }
    })
  },
}

const RETRY_AFTER_LEASE_MS = 5_000

const retryAfterTruthful: Check = {
  id: 'retry-after-remaining-lease',
  title: "The 409's Retry-After is the time left on the lease: about the whole lease at first, less later",
  points: 3,
  hint: 'Retry-After = ceil((lease_until - now) / 1000) seconds, at least 1: pass the lease left (in seconds) to requestInFlight(), not a constant and not milliseconds.',
  timeoutMs: 45_000,
  async run(ctx) {
    const { bank, a, b } = await leaseBank(ctx, RETRY_AFTER_LEASE_MS)
    await untilConclusive(ctx, async () => {
      const { body, before, first, claim, send } = await holdFirst(ctx, bank, a, b)
      const seen: string[] = []
      try {
        // At once, then at half the lease: a constant, or the whole lease every time, is wrong at one of them.
        for (const at of [claim.inCoreAt, claim.inCoreAt + RETRY_AFTER_LEASE_MS / 2]) {
          await sleepUntil(at)
          const duplicate = send()
          const { sentAt, seen: decided, seenAt } = await probe(bank, duplicate, 1)
          if ('reachedCore' in decided) {
            if (seenAt < claim.sentAt + RETRY_AFTER_LEASE_MS - CLOCK_SLACK_MS)
              fail('a duplicate took the claim over while its lease was still running: the lease ended early (see lease-length)')
            await settle(bank, [first, duplicate])
            return 'inconclusive'
          }
          const reply = decided.answered[0]!
          expectProblem(reply, 409, 'a duplicate while the first request holds its lease gets 409')
          const what = `${sentAt - claim.inCoreAt} ms into a ${RETRY_AFTER_LEASE_MS} ms lease`
          expectRetryAfterLeft(reply, { leaseMs: RETRY_AFTER_LEASE_MS, ...claim }, sentAt, seenAt, what)
          seen.push(`${what}: Retry-After ${reply.headers['retry-after']}`)
        }
        await bank.core({ hold: false })
        await expectExactlyOnce(bank, before, body, await first)
        ctx.note(seen.join('; '))
        return 'done'
      } finally {
        await bank.core({ hold: false })
      }
    })
  },
}

const TAKEOVER_LEASE_MS = 800
/** When a takeover is certain: the latest possible end of the lease, plus a quarter of it. */
const afterLease = (claim: { inCoreAt: number }) => claim.inCoreAt + TAKEOVER_LEASE_MS * 1.25

const takeoverDifferentBody: Check = {
  id: 'takeover-different-body-422',
  title: 'After a lease ran out, a different body under the key still gets 422: it never takes the claim over',
  points: 3,
  hint: 'Compare the fingerprint before anything else, the lease included: an expired claim may be taken over only by the same request.',
  timeoutMs: 40_000,
  async run(ctx) {
    const { bank, b, body, before, first, claim, send } = await heldClaim(ctx, TAKEOVER_LEASE_MS)
    const amended: TransferBody = ctx.rng.pick([
      { ...body, amount: body.amount + ctx.rng.amount(100, 50_000) },
      { ...body, to: b.accounts.find((x) => x !== body.to)! },
    ])
    try {
      await sleepUntil(afterLease(claim))
      const { seen } = await probe(bank, send(amended), 1)
      if ('reachedCore' in seen)
        fail('after the lease ran out, a request with a different body took the claim over and is executing: the key stands for the first body, lease or not', {
          expected: 'HTTP 422 at once',
          got: 'the changed request waiting in the core',
        })
      const refusal = seen.answered[0]!
      // A 409 refuses without taking over; whether it should be 422 and whether the lease ended have checks of their own.
      if (refusal.status === 409) ctx.note('the changed body got 409, not 422 (see in-flight-different-payload-422, lease-length)')
      else expectChangedBodyRefused(refusal, "the same key with a different body gets 422, also once the first request's lease has run out", ctx.note)
      await bank.core({ hold: false })
      expectStatus(await first, 201, 'the first request, never taken over, completes')
    } finally {
      await bank.core({ hold: false })
    }
    const moved = newRows(before, await bank.ledger())
    if (moved.some((e) => e.to === amended.to && e.amount === amended.amount))
      fail('the changed request moved money', { expected: `only ₩${body.amount} to ${body.to}`, got: moved.map((e) => `₩${e.amount} to ${e.to}`).join(', ') })
    await expectExactlyOnce(bank, before, body, await first)
  },
}

const takeoverCoreFailure: Check = {
  id: 'takeover-core-failure',
  title: "A superseded original that fails in the core leaves the takeover's claim alone: one transfer, no key stuck",
  points: 4,
  hint: "Release only your own claim: DELETE ... WHERE key = ? AND owner = ? AND status = 'in_progress'. After a takeover the key belongs to the retry.",
  timeoutMs: 40_000,
  async run(ctx) {
    const { bank, a, body, key, before, first, claim, send } = await heldClaim(ctx, TAKEOVER_LEASE_MS)
    let original: Reply
    let takeover: Reply
    try {
      await sleepUntil(afterLease(claim))
      const retry = send()
      const { seen } = await probe(bank, retry, 1)
      if ('answered' in seen)
        fail('setup: after the lease ran out the retry did not take the claim over (see lease-length)', { exchange: seen.answered[0]!.exchange })
      // The core releases its callers in arrival order, so the one failure it is
      // told to give goes to the original, whose lease the retry took over.
      await bank.core({ hold: false, failNext: 1 })
      ;[original, takeover] = await Promise.all([first, retry])
    } finally {
      await bank.core({ hold: false, failNext: 0 })
    }
    if (takeover.status !== 201)
      fail('the retry that took the claim over lost it when the superseded original failed: the original released a key it no longer owned', {
        exchange: takeover.exchange,
        expected: 'HTTP 201 for the takeover',
        got: `HTTP ${takeover.status}`,
      })
    const again = await bank.transfer(a.customer, body, { key })
    const rows = newRows(before, await bank.ledger()).filter((e) => e.from === body.from && e.to === body.to).length
    if (!is2xx(again) || rows > 1)
      fail(
        'after the takeover completed, the key was free again: the failed original deleted the completed claim on its way out, so one more retry ' +
          (rows > 1 ? 'moved the money a second time' : `got HTTP ${again.status}`),
        { exchange: again.exchange, expected: 'the key completed: HTTP 2xx, no new transfer', got: `HTTP ${again.status}, ${rows} ledger rows` },
      )
    await expectExactlyOnce(bank, before, body, takeover)
    ctx.note(
      `original failed in the core (${original.status}) after a takeover; the takeover answered ${takeover.status}; a later retry ${again.status}; 1 ledger row`,
    )
  },
}

export const leaseChecks: Check[] = [leaseLength, retryAfterTruthful, takeoverDifferentBody, takeoverCoreFailure]
