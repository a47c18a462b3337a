// Stage 5, the moment a key expires, in the cases a steady retry loop never
// meets: expiry before any purge has run, a first request that took a large
// part of its TTL, and a request still running when its TTL passes.
//
// Each check starts an instance with a short TTL and moves the grade's clock
// (timeline.ts): a key stamped at t is resent at t + TTL - 1, its last
// millisecond (still remembered), and at t + TTL, its first millisecond
// gone (a new request). On a real clock only the second probe is sent, a
// margin after the latest possible expiry. Expiry is judged by the ledger and
// the body (retryVerdict.ts), never by the Idempotent-Replayed marker.
import type { BankClient } from '#harness/bankClient.ts'
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { expectProblem, expectStatus, fail, notJudged, type Check, type CheckContext } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'
import { elapsed, firstOutside, lastInside, momentOf, type Moment } from './timeline.ts'
import { openParties, periodBank, type Party } from './setup.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { judgeRetry, sameIntent } from './retryVerdict.ts'

type Deposit = { to: string; amount: number }

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage5Expiry.<key>).
const say = phrases('stage5Expiry', {
  stillAlive: '{what}, the key is still alive: the first response comes back and nothing executes',
  firstAgain: 'the first response again, no new ledger row',
  executedAgain: 'HTTP {status}, executed again (a new ledger row)',
  rememberedBecause: '{what}, the first response came back, so the key was still remembered: {remembered}',
  executedAsNew: 'HTTP 201, executed as a new request (a new ledger row)',
  storedBody: 'HTTP {status}, the stored body, no new ledger row',
  expiredIsNew: '{what}, the key has expired, so the request is new and executes',
  createdAndRow: 'HTTP 201 and a new ledger row',
  noNewRow: 'HTTP {status}, no new ledger row',
  executesAsNew: '{what}, the request executes as new',
  depositExecutes: 'deposit {n} executes',
  keyResent: 'key {n} of {keys}, resent {after} after its first request (TTL {ttlMs} ms)',
  honouredUntilPurge:
    'either an expired key is honoured until a purge deletes its row (it must count as unknown the moment it is looked up), or keys never expire at all (see new-execution-after-expiry)',
  purgeNote: '{keys} keys, each executed anew at the end of its {ttlMs} ms TTL',
  letThrough: 'the deposit executes once the core lets it through',
  resentSlow: 'resent {after} after the first request arrived (TTL {ttlMs} ms; the first request took {tookMs} ms)',
  neverExpired: 'the key did not expire at all: still remembered {afterFirst} after the first request and {afterCompleted} after it completed (TTL {ttlMs} ms)',
  forgottenLate: 'still remembered {stillAt} after the first request, forgotten {goneAt} after it (it completed at {completedAt})',
  fromFirstRequest: 'its TTL runs from the first request, not from the moment it completed',
  executedPastTtl:
    "{after} after the claim, past the key's TTL (LAB_KEY_TTL_MS={ttlMs}) with the first request still held in the core, a duplicate executed a second time{earlier}: a claim in progress is kept past its TTL until its lease runs out, and the grader started this server with LAB_LEASE_MS={leaseMs} (CONTRACT.md, stage 5)",
  earlier409: ' (one {after} after the claim had got 409)',
  stillInFlight409: 'HTTP 409 (the first request is still in flight)',
  secondInCore: 'a second execution waiting in the core',
  duplicate409: "a duplicate {after} after the claim, of a request still in flight, gets 409, also once the key's TTL has passed",
  holderCompletes: 'the first request, still the holder of its claim, completes',
})

/** An instance with a TTL of `ttlMs` (and optionally a lease), one customer with one account. */
async function shortTtlBank(ctx: CheckContext, ttlMs: number, leaseMs?: number) {
  const bank = await ctx.startServer({ settings: { keyTtlMs: ttlMs, leaseMs } })
  const [a] = await openParties(ctx, 1, 1, bank)
  return { bank, a }
}

/** Moves the clock to `at`, resends `body` under `key` and judges what it did. */
async function resendAt(ctx: CheckContext, at: number, bank: BankClient, a: Party, body: Deposit, key: string, first: Reply) {
  await ctx.clock.moveTo(at)
  const before = await bank.ledger()
  const { at: sent, value: reply } = await momentOf(ctx.clock, () => bank.deposit(a.customer, body, { key }))
  return { sent, reply, verdict: judgeRetry(first, reply, before, await bank.ledger(), sameIntent(body)) }
}

/** Before expiry the key is remembered: the first response again, nothing executed. */
function expectRemembered(probe: { reply: Reply; verdict: string }, what: Line): void {
  if (probe.verdict !== 'remembered')
    fail(say('stillAlive', { what }), {
      exchange: probe.reply.exchange,
      expected: say('firstAgain'),
      got: probe.verdict === 'executed' ? say('executedAgain', { status: probe.reply.status }) : `HTTP ${probe.reply.status}`,
    })
}

/** After expiry the key is unknown: the request executes anew (expiry is a course rule: draft-07 lets keys expire, and says nothing of when). */
function expectExecutedAnew(probe: { reply: Reply; verdict: string }, what: Line, remembered: Line): void {
  if (probe.verdict === 'remembered')
    fail(courseRule('expiry', say('rememberedBecause', { what, remembered })), {
      exchange: probe.reply.exchange,
      expected: say('executedAsNew'),
      got: say('storedBody', { status: probe.reply.status }),
    })
  if (probe.verdict === 'refused')
    fail(courseRule('expiry', say('expiredIsNew', { what })), {
      exchange: probe.reply.exchange,
      expected: say('createdAndRow'),
      got: say('noNewRow', { status: probe.reply.status }),
    })
  expectStatus(probe.reply, 201, say('executesAsNew', { what }))
}

/** The TTL on a real clock (on a controlled one, the default: periodBank). */
const PURGE_TTL_MS = 3_000
const PURGE_KEYS = 4

const expiryWithoutPurge: Check = {
  id: 'expiry-without-purge',
  title: 'A key is forgotten as soon as its TTL has passed, whether or not a purge has run since',
  points: 4,
  hint: 'When the row you find has expired (expires_at <= now, and no live lease), treat the key as unknown right there; the periodic purge only keeps the table small.',
  timeoutMs: 45_000,
  timed: true,
  async run(ctx) {
    // Keys first used one after another, each resent at its own expiry: on a
    // controlled clock 1 ms apart, on a real one a quarter of the TTL apart. A
    // layer that forgets keys only when its purge runs (at most once per
    // interval) forgets at most the keys whose probes follow a purge; with
    // probes closer together than its interval, it misses some of them,
    // whenever it runs.
    const { bank, ttlMs } = await periodBank(ctx, { ttlMs: PURGE_TTL_MS })
    const [a] = await openParties(ctx, 1, 1, bank)
    const base = ctx.rng.amount(1_000, 50_000)
    const uses: Array<{ body: Deposit; key: string; first: Reply; at: Moment }> = []
    const start = ctx.clock.now()
    for (let i = 0; i < PURGE_KEYS; i++) {
      await ctx.clock.moveTo(start + i * (ctx.clock.controlled ? 1 : ttlMs / PURGE_KEYS))
      const body = { to: a.accounts[0]!, amount: base + i }
      const key = ctx.rng.uuid()
      const { at, value: first } = await momentOf(ctx.clock, () => bank.deposit(a.customer, body, { key }))
      expectStatus(first, 201, say('depositExecutes', { n: i + 1 }))
      uses.push({ body, key, first, at })
    }
    for (const [i, { body, key, first, at }] of uses.entries()) {
      const what = (when: number) => say('keyResent', { n: i + 1, keys: PURGE_KEYS, after: elapsed(at, when), ttlMs })
      if (ctx.clock.controlled) {
        const insideAt = lastInside(ctx.clock, at, ttlMs, 0)
        expectRemembered(await resendAt(ctx, insideAt, bank, a, body, key, first), what(insideAt))
      }
      const outsideAt = firstOutside(ctx.clock, at, ttlMs, ttlMs * 0.05)
      expectExecutedAnew(await resendAt(ctx, outsideAt, bank, a, body, key, first), what(outsideAt), say('honouredUntilPurge'))
    }
    ctx.note(say('purgeNote', { keys: PURGE_KEYS, ttlMs }))
  },
}

const SLOW_TTL_MS = 4_000
/** How long the first request is held in the core, as a share of the TTL. */
const SLOW_SHARE = 0.6

const ttlFromFirstRequest: Check = {
  id: 'ttl-from-first-request',
  title: 'A first request that runs for most of its TTL: the key still expires one TTL after that request arrived',
  points: 4,
  hint: 'Set expires_at once, when the key is claimed (claim time + LAB_KEY_TTL_MS); completing the request, or storing its response, must not move it.',
  timeoutMs: 45_000,
  timed: true,
  async run(ctx) {
    const { bank, a } = await shortTtlBank(ctx, SLOW_TTL_MS)
    const body = { to: a.accounts[0]!, amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    let first: Reply
    try {
      // The key was stamped at `claim`; it must expire at claim + TTL.
      const { at: claim, value: held } = await momentOf(ctx.clock, () => holdInCore(bank, () => bank.deposit(a.customer, body, { key })))
      await ctx.clock.moveTo(claim.to + SLOW_TTL_MS * SLOW_SHARE)
      await bank.core({ hold: false })
      first = await held.reply
      const completedAt = ctx.clock.now()
      expectStatus(first, 201, say('letThrough'))
      const what = (when: number) => say('resentSlow', { after: elapsed(claim, when), ttlMs: SLOW_TTL_MS, tookMs: SLOW_TTL_MS * SLOW_SHARE })
      if (ctx.clock.controlled) {
        const insideAt = lastInside(ctx.clock, claim, SLOW_TTL_MS, 0)
        expectRemembered(await resendAt(ctx, insideAt, bank, a, body, key, first), what(insideAt))
      }
      // On a real clock, 15 % of the TTL after its latest possible end; a TTL
      // counted from completion instead still has at least 45 % of the TTL to run.
      const outsideAt = firstOutside(ctx.clock, claim, SLOW_TTL_MS, SLOW_TTL_MS * 0.15)
      const probe = await resendAt(ctx, outsideAt, bank, a, body, key, first)
      if (probe.verdict === 'remembered') {
        // Still remembered: a TTL counted from completion has ended by completedAt + TTL,
        // which tells it from a key that never expires.
        const lateAt = firstOutside(ctx.clock, { from: completedAt, to: completedAt }, SLOW_TTL_MS, SLOW_TTL_MS * 0.25)
        const late = await resendAt(ctx, lateAt, bank, a, body, key, first)
        // Not expired a TTL after completion either: whether and when keys expire is another check's; from when is this one's.
        if (late.verdict === 'remembered')
          notJudged(
            say('neverExpired', {
              afterFirst: elapsed(claim, outsideAt),
              afterCompleted: elapsed({ from: completedAt, to: completedAt }, lateAt),
              ttlMs: SLOW_TTL_MS,
            }),
            'new-execution-after-expiry',
          )
        ctx.note(say('forgottenLate', { stillAt: elapsed(claim, outsideAt), goneAt: elapsed(claim, lateAt), completedAt: elapsed(claim, completedAt) }))
      }
      expectExecutedAnew(probe, what(outsideAt), say('fromFirstRequest'))
    } finally {
      await bank.core({ hold: false })
    }
  },
}

const ACROSS_TTL_MS = 1_000
const ACROSS_LEASE_MS = 20_000

const inFlightAcrossTtl: Check = {
  id: 'in-flight-across-ttl',
  title: 'A request still running when its TTL passes keeps its claim: a duplicate gets 409 and does not execute, up to the last millisecond of its lease',
  points: 4,
  hint: 'An expired row may be forgotten only if no request can still be working under it: completed, or in progress with its lease run out too. The same goes for the purge.',
  timeoutMs: 45_000,
  timed: true,
  async run(ctx) {
    const bank = await ctx.startServer({ settings: { keyTtlMs: ACROSS_TTL_MS, leaseMs: ACROSS_LEASE_MS } })
    const [a, b] = await openParties(ctx, 2, 2, bank)
    const { body, key } = plan(ctx, a, b)
    const before = await bank.ledger()
    let first: Reply
    try {
      const { at: claim, value: held } = await momentOf(ctx.clock, () => holdInCore(bank, () => bank.transfer(a.customer, body, { key })))
      // At the TTL's end (on a real clock, half a TTL later), and on a controlled one at the lease's last millisecond too.
      const probes = [firstOutside(ctx.clock, claim, ACROSS_TTL_MS, ACROSS_TTL_MS / 2)]
      if (ctx.clock.controlled) probes.push(lastInside(ctx.clock, claim, ACROSS_LEASE_MS, 0))
      // The last probe refused with 409: the claim seen kept past its TTL, up to then.
      let keptAt: number | undefined
      for (const at of probes) {
        await ctx.clock.moveTo(at)
        const seen = await answeredOrInCore(
          bank,
          pending(bank.transfer(a.customer, body, { key })).then((r) => [r]),
          1,
        )
        // The lease is the one the grader set, not one the layer was seen to keep: a layer with none fails here too.
        if ('reachedCore' in seen)
          fail(
            say('executedPastTtl', {
              after: elapsed(claim, at),
              ttlMs: ACROSS_TTL_MS,
              earlier: keptAt === undefined ? '' : say('earlier409', { after: elapsed(claim, keptAt) }),
              leaseMs: ACROSS_LEASE_MS,
            }),
            { expected: say('stillInFlight409'), got: say('secondInCore') },
          )
        expectProblem(seen.answered[0]!, 409, say('duplicate409', { after: elapsed(claim, at) }))
        keptAt = at
      }
      await bank.core({ hold: false })
      first = await held.reply
    } finally {
      await bank.core({ hold: false })
    }
    expectStatus(first, 201, say('holderCompletes'))
    await expectExactlyOnce(bank, before, body, first)
  },
}

export const expiryChecks: Check[] = [expiryWithoutPurge, ttlFromFirstRequest, inFlightAcrossTtl]
