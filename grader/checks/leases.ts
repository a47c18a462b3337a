// Stage 3, the lease at its boundaries: how long a claim really holds, what
// Retry-After says about it, and what a takeover may and may not do.
//
// Each check starts its own instance with a lease of a known length L and
// holds the first request in the core; the claim was made at one moment of
// the grade's clock, which stands still until a check moves it. A probe goes
// at the lease's last millisecond (claim + L - 1) and another at its first
// millisecond after (claim + L): timeline.ts. On a real clock the same probes
// stand a margin inside and outside, and a stalled machine makes a round
// inconclusive instead of deciding it.
import type { BankClient, TransferBody } from '../../harness/bankClient.ts'
import { expectProblem, expectStatus, fail, type Check, type CheckContext } from '../check.ts'
import type { Reply } from '../../harness/http.ts'
import { expectChangedBodyRefused, is2xx, newRows, openParties, periodBank, type Party } from './setup.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { expectRetryAfterLeft } from './retryAfter.ts'
import { decidedInside, elapsed, firstOutside, lastInside, momentOf, untilConclusive, type Moment } from './timeline.ts'

/** A server whose lease the check knows (periodBank: `shortMs` on a real clock), and two funded customers. */
async function leaseBank(ctx: CheckContext, shortMs: number) {
  const { bank, leaseMs } = await periodBank(ctx, { leaseMs: shortMs })
  const [a, b] = await openParties(ctx, 2, 2, bank)
  return { bank, a, b, leaseMs }
}

/** A first request under a fresh key, held in the core; `send` resends under the same key. */
async function holdFirst(ctx: CheckContext, bank: BankClient, a: Party, b: Party) {
  const { body, key } = plan(ctx, a, b)
  const before = await bank.ledger()
  // The claim was made at `claim` (exactly, on a controlled clock): its lease ends at claim + L.
  const { at: claim, value: held } = await momentOf(ctx.clock, () => holdInCore(bank, () => bank.transfer(a.customer, body, { key })))
  const send = (other: TransferBody = body) => pending(bank.transfer(a.customer, other, { key }))
  return { body, key, before, first: held.reply, claim, send }
}

/** A server whose lease the check knows, two funded customers, and one held first request. */
async function heldClaim(ctx: CheckContext, shortMs: number) {
  const { bank, a, b, leaseMs } = await leaseBank(ctx, shortMs)
  return { bank, a, b, leaseMs, ...(await holdFirst(ctx, bank, a, b)) }
}

/** Moves the clock to `at`, sends one duplicate while the core is held: answered (refused) or in the core (executing). */
async function probeAt(ctx: CheckContext, bank: BankClient, at: number, send: () => Promise<Reply>, inCore: number) {
  await ctx.clock.moveTo(at)
  const { at: sent, value: seen } = await momentOf(ctx.clock, () =>
    answeredOrInCore(
      bank,
      send().then((r) => [r]),
      inCore,
    ),
  )
  return { sent, seen }
}

/** Lets every held request of an abandoned round finish. */
async function settle(bank: BankClient, replies: Array<Promise<Reply>>) {
  await bank.core({ hold: false })
  await Promise.allSettled(replies)
}

/** The lease on a real clock (on a controlled one, the default: periodBank). */
const LENGTH_MS = 4_000

const leaseLength: Check = {
  id: 'lease-length',
  title: "A claim holds for LAB_LEASE_MS: a retry at the lease's last millisecond gets 409, one at its end takes over",
  points: 4,
  hint: 'lease_until = claim time + LAB_LEASE_MS, both in milliseconds (config.leaseMs is already in ms; Date.now() too); the claim has expired once lease_until <= now.',
  timeoutMs: 45_000,
  timed: true,
  async run(ctx) {
    const { bank, a, b, leaseMs } = await leaseBank(ctx, LENGTH_MS)
    await untilConclusive(ctx, async () => {
      const { body, before, first, claim, send } = await holdFirst(ctx, bank, a, b)
      let retried: Promise<Reply> | undefined
      try {
        // Inside: the lease's last millisecond. A lease a thousand times too short ran out long ago.
        const insideAt = lastInside(ctx.clock, claim, leaseMs, (leaseMs * 3) / 4)
        const early = await probeAt(ctx, bank, insideAt, () => (retried = send()), 1)
        if ('reachedCore' in early.seen) {
          if (!decidedInside(ctx.clock, claim, leaseMs, early.sent.to)) {
            await settle(bank, [first, retried!])
            return 'inconclusive'
          }
          fail(
            `a retry ${elapsed(claim, insideAt)} after the claim, inside its ${leaseMs} ms lease, took it over and is executing: ` +
              'the lease is shorter than LAB_LEASE_MS (is it divided by 1000 somewhere, or compared the wrong way round?)',
            { expected: 'HTTP 409 (the first request still holds its lease)', got: 'a second execution waiting in the core' },
          )
        }
        expectProblem(early.seen.answered[0]!, 409, `a retry ${elapsed(claim, insideAt)} into a ${leaseMs} ms lease gets 409`)

        // Outside: the lease's end. A lease a thousand times too long, or one never compared with the clock, still holds.
        const outsideAt = firstOutside(ctx.clock, claim, leaseMs, leaseMs / 10)
        let late!: Promise<Reply>
        const after = await probeAt(ctx, bank, outsideAt, () => (late = send()), 1)
        if ('answered' in after.seen) {
          const [reply] = after.seen.answered
          fail(
            `a retry ${elapsed(claim, outsideAt)} after the claim, at the end of its ${leaseMs} ms lease, was refused: ` +
              'the lease is longer than LAB_LEASE_MS (multiplied by 1000, held one millisecond too long with < instead of <=, or never compared with the clock?)',
            { exchange: reply!.exchange, expected: 'the retry takes the expired claim over and executes', got: `HTTP ${reply!.status}` },
          )
        }
        await bank.core({ hold: false })
        const [, retry] = await Promise.all([first, late])
        expectStatus(retry, 201, 'the retry that took over the expired claim executes the transfer')
        await expectExactlyOnce(bank, before, body, retry)
        ctx.note(`lease ${leaseMs} ms: 409 at ${elapsed(claim, insideAt)}, taken over at ${elapsed(claim, outsideAt)}`)
        return 'done'
      } finally {
        await bank.core({ hold: false })
      }
    })
  },
}

/** The lease on a real clock (on a controlled one, the default: periodBank). */
const RETRY_AFTER_LEASE_MS = 5_000

const retryAfterTruthful: Check = {
  id: 'retry-after-remaining-lease',
  title: "The 409's Retry-After is the time left on the lease: the whole lease at first, less later, 1 at its last second",
  points: 3,
  hint: 'Retry-After = ceil((lease_until - now) / 1000) seconds, at least 1: pass the lease left (in seconds) to requestInFlight(), not a constant and not milliseconds.',
  timeoutMs: 45_000,
  timed: true,
  async run(ctx) {
    const { bank, a, b, leaseMs } = await leaseBank(ctx, RETRY_AFTER_LEASE_MS)
    await untilConclusive(ctx, async () => {
      const { body, before, first, claim, send } = await holdFirst(ctx, bank, a, b)
      const seen: string[] = []
      const duplicates: Array<Promise<Reply>> = []
      try {
        // At once, 1.5 s later (the lease left is then between two whole seconds) and, on a controlled clock,
        // at its last millisecond: a constant, the whole lease every time, or milliseconds is wrong at one of them.
        const probes = [claim.to, claim.to + 1_500, ...(ctx.clock.controlled ? [lastInside(ctx.clock, claim, leaseMs, 0)] : [])]
        for (const at of probes) {
          const { sent, seen: decided } = await probeAt(ctx, bank, at, () => duplicates[duplicates.push(send()) - 1]!, 1)
          if ('reachedCore' in decided) {
            if (decidedInside(ctx.clock, claim, leaseMs, sent.to))
              fail('a duplicate took the claim over while its lease was still running: the lease ended early (see lease-length)')
            await settle(bank, [first, ...duplicates])
            return 'inconclusive'
          }
          const reply = decided.answered[0]!
          expectProblem(reply, 409, 'a duplicate while the first request holds its lease gets 409')
          const what = `${elapsed(claim, at)} into a ${leaseMs} ms lease`
          expectRetryAfterLeft(reply, { leaseMs, at: claim }, sent, what)
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

/** The lease on a real clock (on a controlled one, the default: periodBank). */
const TAKEOVER_LEASE_MS = 800
/** When a takeover is certain: the lease's end (on a real clock, a quarter of it later). */
const afterLease = (ctx: CheckContext, claim: Moment, leaseMs: number) => firstOutside(ctx.clock, claim, leaseMs, leaseMs / 4)

const takeoverDifferentBody: Check = {
  id: 'takeover-different-body-422',
  title: 'After a lease ran out, a different body under the key still gets 422: it never takes the claim over',
  points: 3,
  hint: 'Compare the fingerprint before anything else, the lease included: an expired claim may be taken over only by the same request.',
  timeoutMs: 40_000,
  timed: true,
  async run(ctx) {
    const { bank, b, body, before, first, claim, send, leaseMs } = await heldClaim(ctx, TAKEOVER_LEASE_MS)
    const amended: TransferBody = ctx.rng.pick([
      { ...body, amount: body.amount + ctx.rng.amount(100, 50_000) },
      { ...body, to: b.accounts.find((x) => x !== body.to)! },
    ])
    try {
      const { seen } = await probeAt(ctx, bank, afterLease(ctx, claim, leaseMs), () => send(amended), 1)
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
  timed: true,
  async run(ctx) {
    const { bank, a, body, key, before, first, claim, send, leaseMs } = await heldClaim(ctx, TAKEOVER_LEASE_MS)
    let original: Reply
    let takeover: Reply
    try {
      let retry!: Promise<Reply>
      const { seen } = await probeAt(ctx, bank, afterLease(ctx, claim, leaseMs), () => (retry = send()), 1)
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
