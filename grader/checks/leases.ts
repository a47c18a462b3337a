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
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import type { BankClient, TransferBody } from '#harness/bankClient.ts'
import { expectProblem, expectStatus, fail, notJudged, type Check, type CheckContext } from '../engine/check.ts'
import type { Reply } from '#harness/http.ts'
import { DEFAULT_KEY_TTL_MS, expectChangedBodyRefused, is2xx, newRows, openParties, periodBank, type Party } from './setup.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { retryAfterProblem } from './retryAfter.ts'
import { courseRule } from '../engine/courseRule.ts'
import { decidedInside, elapsed, firstOutside, lastInside, momentOf, span, untilConclusive, type Moment } from './timeline.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": leases.<key>).
const say = phrases('leases', {
  causeFreeAtOnce: ': the claim is free from the moment it is made (a lease_until at or before the claim time, or expiry compared the wrong way round?)',
  causeOneMs: ': one millisecond too long (is expiry tested with lease_until < now? A claim has expired once lease_until <= now)',
  causeTimes1000: ': exactly 1000 × LAB_LEASE_MS (milliseconds taken for seconds and multiplied by 1000?)',
  causeOver1000: ': exactly LAB_LEASE_MS / 1000 (milliseconds divided as if converted to seconds?)',
  exactly: 'exactly {span}',
  between: 'more than {from} and at most {to}',
  pastLease: 'a retry {after} after the claim, past its {leaseMs} ms lease, still got 409',
  neverTaken: 'the claim was never taken over: {past}',
  notTakenOther: 'the claim was not taken over: {past}, and one {far} after it got HTTP {status}',
  noLeaseFar: 'no lease: {past}, and so did one {far} after it',
  longerTaken: 'the lease is longer than LAB_LEASE_MS: {past}; one {far} after it took the claim over',
  takenInside: 'a retry {after} after the claim, inside its {leaseMs} ms lease, took it over and is executing: the lease is shorter than LAB_LEASE_MS',
  stillHolds409: 'HTTP 409 (the first request still holds its lease)',
  secondExecution: 'a second execution waiting in the core',
  measuredOther: '{taken}. Measured on another claim: the lease is {measured}, not {lease}{causes}',
  inside409: 'a retry {after} into a {leaseMs} ms lease gets 409',
  refusedAtEnd: 'a retry {after} after the claim, at the end of its {leaseMs} ms lease, was refused (HTTP {status})',
  takesOver: 'the retry takes the expired claim over and executes',
  stillHeldAfter: '{refused}: the claim still held after LAB_LEASE_MS',
  stillHeldAfterReal:
    '{refused}: the claim still held after LAB_LEASE_MS (on a real clock the grader cannot wait to tell a longer lease from none: see crash-mid-transfer)',
  longerOther: '{refused}: the lease is longer than LAB_LEASE_MS; a retry {at} after the claim got HTTP {status}',
  noLeaseRefused: 'no lease: {refused}, and so was one {far} after it',
  measuredLater: '{refused}: the lease is longer than LAB_LEASE_MS. Measured by later retries on the same claim: it is {measured}, not {lease}{causes}',
  takeoverExecutes: 'the retry that took over the expired claim executes the transfer',
  lengthNote: 'lease {leaseMs} ms: 409 at {inside}, taken over at {outside}',
  endedEarly: 'the lease ended early: a duplicate {after} into its {leaseMs} ms lease took the claim over',
  holds409: 'a duplicate while the first request holds its lease gets 409',
  intoLease: '{after} into a {leaseMs} ms lease',
  retryAfterSeen: '{what}: Retry-After {value}',
  changedTookOver:
    'after the lease ran out, a request with a different body took the claim over and is executing: the key stands for the first body, lease or not',
  expected422AtOnce: 'HTTP 422 at once',
  changedWaiting: 'the changed request waiting in the core',
  changed409: 'the changed body got 409, not 422 (see in-flight-different-payload-422, lease-length)',
  changed422: "the same key with a different body gets 422, also once the first request's lease has run out",
  firstCompletes: 'the first request, never taken over, completes',
  changedMoved: 'the changed request moved money',
  onlyAmount: 'only {amount} to {to}',
  amountTo: '{amount} to {to}',
  mustTakeOver: 'after the lease ran out, a retry must take the claim over and execute',
  waitsInCore: 'the retry waits in the core (it took the claim over)',
  takeoverLost: 'the retry that took the claim over lost it when the superseded original failed: the original released a key it no longer owned',
  takeover201: 'HTTP 201 for the takeover',
  keyFreeAgain:
    'after the takeover completed, the key was free again: the failed original deleted the completed claim on its way out, so one more retry {what}',
  movedSecondTime: 'moved the money a second time',
  gotStatus: 'got HTTP {status}',
  keyCompleted: 'the key completed: HTTP 2xx, no new transfer',
  statusRows: 'HTTP {status}, {rows} ledger rows',
  takeoverFailureNote: 'original failed in the core ({original}) after a takeover; the takeover answered {takeover}; a later retry {again}; 1 ledger row',
})

/**
 * A server whose lease the check knows (periodBank: `shortMs` on a real
 * clock), and two funded customers. Every check that takes a claim to its
 * lease's end starts here, stage3.ts's crashes too: on a real clock only a
 * short lease ends within a check's time limit.
 */
export async function leaseBank(ctx: CheckContext, shortMs: number) {
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

/** A server whose lease the check knows, two funded customers, and one held first request (also stage3.ts's). */
export async function heldClaim(ctx: CheckContext, shortMs: number) {
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
async function settle(bank: BankClient, replies: Array<Promise<Reply | undefined> | undefined>) {
  await bank.core({ hold: false })
  await Promise.allSettled(replies.filter((r) => r !== undefined))
}

/**
 * 23 hours: a claim that a retry this long after it was made still cannot
 * take over has no lease (or none that ever ends). Far past any lease a unit
 * mistake makes (1000 × 30 s is 8 h 20 min), and still inside the default key
 * TTL (24 h), so that from stage 5 on the key itself has not expired.
 */
export const NO_LEASE_AFTER_MS = DEFAULT_KEY_TTL_MS - 3_600_000

/**
 * Where a claim's lease ended, measured on one held claim: retries at
 * `offsets` (ms after the claim, ascending) until one takes the claim over.
 * `refusedAt` is the last offset that got 409, `takenAt` the first that
 * reached the core (undefined: none did). A probe answered with anything
 * but 409 ends the measure (`other`): that is not a lease still held. Only on
 * a controlled clock, where each probe stands exactly where it is put. The
 * taker waits in the core: `held` lists every reply the caller must settle.
 */
async function measureLease(ctx: CheckContext, bank: BankClient, claim: Moment, send: () => Promise<Reply>, offsets: number[]) {
  const held: Array<Promise<Reply>> = []
  let refusedAt: number | undefined
  for (const offset of offsets) {
    const { seen } = await probeAt(ctx, bank, claim.to + offset, () => held[held.push(send()) - 1]!, 1)
    if ('reachedCore' in seen) return { refusedAt, takenAt: offset, held }
    const reply = seen.answered[0]!
    if (reply.status !== 409) return { refusedAt, other: { at: offset, reply }, held }
    refusedAt = offset
  }
  return { refusedAt, held }
}

/** What a measured lease ending at `takenAt` (after a 409 at `refusedAt`) may come from: only what the numbers support. */
function leaseCauses(leaseMs: number, refusedAt: number | undefined, takenAt: number): Line {
  const exactly = refusedAt === takenAt - 1
  if (takenAt === 0) return say('causeFreeAtOnce')
  if (exactly && takenAt === leaseMs + 1) return say('causeOneMs')
  if (exactly && takenAt === leaseMs * 1000) return say('causeTimes1000')
  if (exactly && takenAt === leaseMs / 1000) return say('causeOver1000')
  return ''
}

/** "exactly N ms", or "more than A and at most B" when the probes left a gap. */
function measured(refusedAt: number | undefined, takenAt: number): Phrase {
  if (refusedAt === takenAt - 1 || (refusedAt === undefined && takenAt === 0)) return say('exactly', { span: span(takenAt) })
  return say('between', { from: span(refusedAt ?? 0), to: span(takenAt) })
}

/**
 * For a check whose property needs a claim taken over once its lease has
 * ended, when a retry at or past the end (`refusedAt`) was still refused
 * with 409 while the first request (`held`, and any retries) waits in the
 * core: its property cannot be judged. Says why and names the check that
 * fails for it: on a controlled clock one more retry, NO_LEASE_AFTER_MS
 * (23 h) after the claim, tells no lease at all (crash-mid-transfer) from a
 * lease that ends, but later than LAB_LEASE_MS (lease-length); a real clock
 * cannot wait that long, and leaves it to lease-length. Settles every held
 * request first.
 */
export async function notJudgedWithoutTakeover(
  ctx: CheckContext,
  bank: BankClient,
  claim: Moment,
  leaseMs: number,
  refusedAt: number,
  send: () => Promise<Reply>,
  held: Array<Promise<Reply | undefined> | undefined>,
): Promise<never> {
  const past = say('pastLease', { after: elapsed(claim, refusedAt), leaseMs })
  if (!ctx.clock.controlled) {
    await settle(bank, held)
    notJudged(say('neverTaken', { past }), 'lease-length')
  }
  const { takenAt, other, held: more } = await measureLease(ctx, bank, claim, send, [NO_LEASE_AFTER_MS])
  await settle(bank, [...held, ...more])
  const far = span(NO_LEASE_AFTER_MS)
  if (other) notJudged(say('notTakenOther', { past, far, status: other.reply.status }), 'lease-length')
  if (takenAt === undefined) notJudged(say('noLeaseFar', { past, far }), 'crash-mid-transfer')
  notJudged(say('longerTaken', { past, far }), 'lease-length')
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
          const taken = say('takenInside', { after: elapsed(claim, insideAt), leaseMs })
          if (!ctx.clock.controlled) fail(courseRule('lease', taken), { expected: say('stillHolds409'), got: say('secondExecution') })
          // Measured on a claim of its own: where between the claim and LAB_LEASE_MS does it end?
          await settle(bank, [first, retried])
          const again = await holdFirst(ctx, bank, a, b)
          const offsets = [...new Set([0, leaseMs / 1000 - 1, leaseMs / 1000, leaseMs / 2, leaseMs - 1].filter((n) => Number.isInteger(n) && n >= 0))].sort(
            (x, y) => x - y,
          )
          const { refusedAt, takenAt, held } = await measureLease(ctx, bank, again.claim, again.send, offsets)
          await settle(bank, [again.first, ...held])
          fail(
            courseRule(
              'lease',
              takenAt === undefined
                ? taken
                : say('measuredOther', {
                    taken,
                    measured: measured(refusedAt, takenAt),
                    lease: span(leaseMs),
                    causes: leaseCauses(leaseMs, refusedAt, takenAt),
                  }),
            ),
            { expected: say('stillHolds409'), got: say('secondExecution') },
          )
        }
        expectProblem(early.seen.answered[0]!, 409, say('inside409', { after: elapsed(claim, insideAt), leaseMs }))

        // Outside: the lease's end. A lease too long, or none at all, still holds.
        const outsideAt = firstOutside(ctx.clock, claim, leaseMs, leaseMs / 10)
        let late!: Promise<Reply>
        const after = await probeAt(ctx, bank, outsideAt, () => (late = send()), 1)
        if ('answered' in after.seen) {
          const [reply] = after.seen.answered
          const refused = say('refusedAtEnd', { after: elapsed(claim, outsideAt), leaseMs, status: reply!.status })
          const details = { exchange: reply!.exchange, expected: say('takesOver'), got: `HTTP ${reply!.status}` }
          if (reply!.status !== 409 || !ctx.clock.controlled)
            fail(courseRule('lease', say(ctx.clock.controlled ? 'stillHeldAfter' : 'stillHeldAfterReal', { refused })), details)
          // Where does it end, if it does? Further retries on the same claim, up to NO_LEASE_AFTER_MS (23 h) after it.
          const {
            refusedAt = leaseMs,
            takenAt,
            other,
            held,
          } = await measureLease(
            ctx,
            bank,
            claim,
            send,
            [leaseMs + 1, 2 * leaseMs, 1000 * leaseMs - 1, 1000 * leaseMs, NO_LEASE_AFTER_MS].filter((n) => n > leaseMs && n <= NO_LEASE_AFTER_MS),
          )
          await settle(bank, [first, late, retried, ...held])
          if (other)
            fail(courseRule('lease', say('longerOther', { refused, at: span(other.at), status: other.reply.status })), {
              ...details,
              exchange: other.reply.exchange,
            })
          if (takenAt === undefined) notJudged(say('noLeaseRefused', { refused, far: span(NO_LEASE_AFTER_MS) }), 'crash-mid-transfer')
          fail(
            courseRule(
              'lease',
              say('measuredLater', { refused, measured: measured(refusedAt, takenAt), lease: span(leaseMs), causes: leaseCauses(leaseMs, refusedAt, takenAt) }),
            ),
            details,
          )
        }
        await bank.core({ hold: false })
        const [, retry] = await Promise.all([first, late])
        expectStatus(retry, 201, say('takeoverExecutes'))
        await expectExactlyOnce(bank, before, body, retry)
        ctx.note(say('lengthNote', { leaseMs, inside: elapsed(claim, insideAt), outside: elapsed(claim, outsideAt) }))
        return 'done'
      } finally {
        await bank.core({ hold: false })
      }
    })
  },
}

/** When a takeover is certain: the lease's end (on a real clock, a quarter of it later). */
const afterLease = (ctx: CheckContext, claim: Moment, leaseMs: number) => firstOutside(ctx.clock, claim, leaseMs, leaseMs / 4)

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
      const seen: Phrase[] = []
      const duplicates: Array<Promise<Reply>> = []
      try {
        // At once, 1.5 s later (the lease left is then between two whole seconds) and, on a controlled clock,
        // at its last millisecond: a constant, the whole lease every time, or milliseconds is wrong at one of them.
        const probes = [claim.to, claim.to + 1_500, ...(ctx.clock.controlled ? [lastInside(ctx.clock, claim, leaseMs, 0)] : [])]
        for (const at of probes) {
          const { sent, seen: decided } = await probeAt(ctx, bank, at, () => duplicates[duplicates.push(send()) - 1]!, 1)
          if ('reachedCore' in decided) {
            await settle(bank, [first, ...duplicates])
            // No lease left to report: what the lease is, is lease-length's to judge.
            if (decidedInside(ctx.clock, claim, leaseMs, sent.to)) notJudged(say('endedEarly', { after: elapsed(claim, at), leaseMs }), 'lease-length')
            return 'inconclusive'
          }
          const reply = decided.answered[0]!
          expectProblem(reply, 409, say('holds409'))
          const what = say('intoLease', { after: elapsed(claim, at), leaseMs })
          const problem = retryAfterProblem(reply, { leaseMs, at: claim }, sent, what)
          if (problem) {
            // "The lease left" is judged against a lease that ends at LAB_LEASE_MS: does it? Still held at its last millisecond,
            const lastAt = lastInside(ctx.clock, claim, leaseMs, leaseMs / 4)
            if (lastAt > at) {
              const { sent: lastSent, seen: atLast } = await probeAt(ctx, bank, lastAt, () => duplicates[duplicates.push(send()) - 1]!, 1)
              if ('reachedCore' in atLast && decidedInside(ctx.clock, claim, leaseMs, lastSent.to)) {
                await settle(bank, [first, ...duplicates])
                notJudged(say('endedEarly', { after: elapsed(claim, lastAt), leaseMs }), 'lease-length')
              }
              if ('reachedCore' in atLast) {
                await settle(bank, [first, ...duplicates])
                return 'inconclusive'
              }
            }
            // and over at its end?
            const endAt = afterLease(ctx, claim, leaseMs)
            const { seen: atEnd } = await probeAt(ctx, bank, endAt, () => duplicates[duplicates.push(send()) - 1]!, 1)
            if ('answered' in atEnd && atEnd.answered[0]!.status === 409)
              await notJudgedWithoutTakeover(ctx, bank, claim, leaseMs, endAt, send, [first, ...duplicates])
            await settle(bank, [first, ...duplicates])
            fail(...problem)
          }
          seen.push(say('retryAfterSeen', { what, value: String(reply.headers['retry-after']) }))
        }
        await bank.core({ hold: false })
        await expectExactlyOnce(bank, before, body, await first)
        ctx.note(listOf(seen, 'semicolon'))
        return 'done'
      } finally {
        await bank.core({ hold: false })
      }
    })
  },
}

/** The lease on a real clock (on a controlled one, the default: periodBank). */
const TAKEOVER_LEASE_MS = 800

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
        fail(say('changedTookOver'), {
          expected: say('expected422AtOnce'),
          got: say('changedWaiting'),
        })
      const refusal = seen.answered[0]!
      // A 409 refuses without taking over; whether it should be 422 and whether the lease ended have checks of their own.
      if (refusal.status === 409) ctx.note(say('changed409'))
      else expectChangedBodyRefused(refusal, say('changed422'), ctx.note)
      await bank.core({ hold: false })
      expectStatus(await first, 201, say('firstCompletes'))
    } finally {
      await bank.core({ hold: false })
    }
    const moved = newRows(before, await bank.ledger())
    if (moved.some((e) => e.to === amended.to && e.amount === amended.amount))
      fail(say('changedMoved'), {
        expected: say('onlyAmount', { amount: `₩${body.amount}`, to: body.to }),
        got: listOf(moved.map((e) => say('amountTo', { amount: `₩${e.amount}`, to: e.to }))),
      })
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
      const endAt = afterLease(ctx, claim, leaseMs)
      const { seen } = await probeAt(ctx, bank, endAt, () => (retry = send()), 1)
      // No takeover, no superseded original to judge.
      if ('answered' in seen) {
        if (seen.answered[0]!.status === 409) await notJudgedWithoutTakeover(ctx, bank, claim, leaseMs, endAt, send, [first, retry])
        fail(say('mustTakeOver'), {
          exchange: seen.answered[0]!.exchange,
          expected: say('waitsInCore'),
          got: `HTTP ${seen.answered[0]!.status}`,
        })
      }
      // The core releases its callers in arrival order, so the one failure it is
      // told to give goes to the original, whose lease the retry took over.
      await bank.core({ hold: false, failNext: 1 })
      ;[original, takeover] = await Promise.all([first, retry])
    } finally {
      await bank.core({ hold: false, failNext: 0 })
    }
    if (takeover.status !== 201)
      fail(say('takeoverLost'), {
        exchange: takeover.exchange,
        expected: say('takeover201'),
        got: `HTTP ${takeover.status}`,
      })
    const again = await bank.transfer(a.customer, body, { key })
    const rows = newRows(before, await bank.ledger()).filter((e) => e.from === body.from && e.to === body.to).length
    if (!is2xx(again) || rows > 1)
      fail(say('keyFreeAgain', { what: rows > 1 ? say('movedSecondTime') : say('gotStatus', { status: again.status }) }), {
        exchange: again.exchange,
        expected: say('keyCompleted'),
        got: say('statusRows', { status: again.status, rows }),
      })
    await expectExactlyOnce(bank, before, body, takeover)
    ctx.note(say('takeoverFailureNote', { original: original.status, takeover: takeover.status, again: again.status }))
  },
}

export const leaseChecks: Check[] = [leaseLength, retryAfterTruthful, takeoverDifferentBody, takeoverCoreFailure]
