// Stage 5, the moment a key expires, in the cases a steady retry loop never
// meets: expiry before any purge has run, a first request that took a large
// part of its TTL, and a request still running when its TTL passes.
//
// Each check starts an instance with a short TTL and places its probes from
// clock readings that bound when the server stamped the key (see clock.ts):
// "expired" probes are sent after the latest possible expiry plus a margin,
// so a correct server has certainly forgotten the key; the margins are
// fractions of the TTL, so a wrong server is still caught when the machine is
// slow. Expiry is judged by the ledger and the body (retryVerdict.ts), never
// by the Idempotent-Replayed marker.
import type { BankClient } from '../../harness/bankClient.ts'
import { expectProblem, expectStatus, fail, type Check, type CheckContext } from '../check.ts'
import type { Reply } from '../../harness/http.ts'
import { CLOCK_SLACK_MS, sleepUntil, timed, type Timed } from './clock.ts'
import { openParties, type Party } from './setup.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, pending, plan } from './inFlight.ts'
import { judgeRetry, sameIntent } from './retryVerdict.ts'

type Deposit = { to: string; amount: number }

/** An instance with a TTL of `ttlMs` (and optionally a lease), one customer with one account. */
async function shortTtlBank(ctx: CheckContext, ttlMs: number, leaseMs?: number) {
  const env: Record<string, string> = { LAB_KEY_TTL_MS: String(ttlMs) }
  if (leaseMs !== undefined) env.LAB_LEASE_MS = String(leaseMs)
  const bank = await ctx.startServer({ env })
  const [a] = await openParties(ctx, 1, 1, bank)
  return { bank, a }
}

/** Resends `body` under `key` and judges what it did. */
async function resend(bank: BankClient, a: Party, body: Deposit, key: string, first: Reply) {
  const before = await bank.ledger()
  const retry = await timed(() => bank.deposit(a.customer, body, { key }))
  return { ...retry, verdict: judgeRetry(first, retry.reply, before, await bank.ledger(), sameIntent(body)) }
}

/** After expiry the key is unknown: the request executes anew. */
function expectExecutedAnew(probe: { reply: Reply; verdict: string }, what: string, remembered: string): void {
  if (probe.verdict === 'remembered')
    fail(`${what}, the first response came back, so the key was still remembered: ${remembered}`, {
      exchange: probe.reply.exchange,
      expected: 'HTTP 201, executed as a new request (a new ledger row)',
      got: `HTTP ${probe.reply.status}, the stored body, no new ledger row`,
    })
  if (probe.verdict === 'refused')
    fail(`${what}, the key has expired, so the request is new and executes`, {
      exchange: probe.reply.exchange,
      expected: 'HTTP 201 and a new ledger row',
      got: `HTTP ${probe.reply.status}, no new ledger row`,
    })
  expectStatus(probe.reply, 201, `${what}, the request executes as new`)
}

const PURGE_TTL_MS = 3_000
const PURGE_KEYS = 4

const expiryWithoutPurge: Check = {
  id: 'expiry-without-purge',
  title: 'A key is forgotten as soon as its TTL has passed, whether or not a purge has run since',
  points: 4,
  hint: 'When the row you find has expired (expires_at <= now, and no live lease), treat the key as unknown right there; the periodic purge only keeps the table small.',
  timeoutMs: 45_000,
  async run(ctx) {
    // Keys first used at quarters of one TTL, each resent just after its own
    // expiry. A layer that forgets keys only when its purge runs (at most once
    // per interval) forgets at most the keys whose probes follow a purge; with
    // probes spread over less than one TTL, a purge every TTL or less often
    // misses some of them, whenever it runs.
    const { bank, a } = await shortTtlBank(ctx, PURGE_TTL_MS)
    const base = ctx.rng.amount(1_000, 50_000)
    const uses: Array<{ body: Deposit; key: string; first: Timed<Reply> }> = []
    const start = Date.now()
    for (let i = 0; i < PURGE_KEYS; i++) {
      await sleepUntil(start + (i * PURGE_TTL_MS) / PURGE_KEYS)
      const body = { to: a.accounts[0]!, amount: base + i }
      const key = ctx.rng.uuid()
      const first = await timed(() => bank.deposit(a.customer, body, { key }))
      expectStatus(first.reply, 201, `deposit ${i + 1} executes`)
      uses.push({ body, key, first })
    }
    for (const [i, { body, key, first }] of uses.entries()) {
      await sleepUntil(first.answeredAt + PURGE_TTL_MS * 1.05 + CLOCK_SLACK_MS)
      const probe = await resend(bank, a, body, key, first.reply)
      expectExecutedAnew(
        probe,
        `key ${i + 1} of ${PURGE_KEYS}, resent ${probe.sentAt - first.answeredAt} ms after its first request was answered (TTL ${PURGE_TTL_MS} ms)`,
        'either an expired key is honoured until a purge deletes its row (it must count as unknown the moment it is looked up), ' +
          'or keys never expire at all (see new-execution-after-expiry)',
      )
    }
    ctx.note(`${PURGE_KEYS} keys, each executed anew just after its ${PURGE_TTL_MS} ms TTL`)
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
  async run(ctx) {
    const { bank, a } = await shortTtlBank(ctx, SLOW_TTL_MS)
    const body = { to: a.accounts[0]!, amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    const sentAt = Date.now()
    let first: Reply
    try {
      const held = await holdInCore(bank, () => bank.deposit(a.customer, body, { key }))
      // The key was stamped in [sentAt, inCoreAt]; it must expire by inCoreAt + TTL.
      const inCoreAt = Date.now()
      await sleepUntil(inCoreAt + SLOW_TTL_MS * SLOW_SHARE)
      await bank.core({ hold: false })
      first = await held.reply
      const completedAt = Date.now()
      expectStatus(first, 201, 'the deposit executes once the core lets it through')
      // 15 % of the TTL after its latest possible end; a TTL counted from
      // completion instead still has at least 45 % of the TTL to run.
      await sleepUntil(inCoreAt + SLOW_TTL_MS * 1.15)
      const probe = await resend(bank, a, body, key, first)
      const what = `resent ${probe.sentAt - sentAt} ms after the first request was sent (TTL ${SLOW_TTL_MS} ms; the first request took ${SLOW_TTL_MS * SLOW_SHARE} ms)`
      if (probe.verdict === 'remembered') {
        // Still remembered: a TTL counted from completion ends by completedAt + TTL,
        // so a probe a quarter TTL past that tells it from a key that never expires.
        await sleepUntil(completedAt + SLOW_TTL_MS * 1.25)
        const late = await resend(bank, a, body, key, first)
        if (late.verdict === 'remembered')
          expectExecutedAnew(
            late,
            `resent ${late.sentAt - sentAt} ms after the first request was sent (TTL ${SLOW_TTL_MS} ms), more than a TTL after it completed too`,
            'the key did not expire at all, counted from the first request or from completion (see new-execution-after-expiry)',
          )
        ctx.note(
          `still remembered ${probe.sentAt - sentAt} ms after the first request, forgotten ${late.sentAt - sentAt} ms after it (it completed at ${completedAt - sentAt} ms)`,
        )
      }
      expectExecutedAnew(probe, what, 'its TTL runs from the first request, not from the moment it completed')
    } finally {
      await bank.core({ hold: false })
    }
  },
}

const ACROSS_TTL_MS = 1_000
const ACROSS_LEASE_MS = 20_000

const inFlightAcrossTtl: Check = {
  id: 'in-flight-across-ttl',
  title: 'A request still running when its TTL passes keeps its claim: a duplicate gets 409 and does not execute',
  points: 4,
  hint: 'An expired row may be forgotten only if no request can still be working under it: completed, or in progress with its lease run out too. The same goes for the purge.',
  timeoutMs: 45_000,
  async run(ctx) {
    const bank = await ctx.startServer({ env: { LAB_KEY_TTL_MS: String(ACROSS_TTL_MS), LAB_LEASE_MS: String(ACROSS_LEASE_MS) } })
    const [a, b] = await openParties(ctx, 2, 2, bank)
    const { body, key } = plan(ctx, a, b)
    const before = await bank.ledger()
    let first: Reply
    try {
      const held = await holdInCore(bank, () => bank.transfer(a.customer, body, { key }))
      const inCoreAt = Date.now()
      // Well past the TTL, far inside the lease.
      await sleepUntil(inCoreAt + ACROSS_TTL_MS * 1.5)
      const seen = await answeredOrInCore(
        bank,
        pending(bank.transfer(a.customer, body, { key })).then((r) => [r]),
        1,
      )
      if ('reachedCore' in seen)
        fail(
          `the TTL (${ACROSS_TTL_MS} ms) passed while the first request was still running under its ${ACROSS_LEASE_MS} ms lease, and a duplicate executed a second time: ` +
            'a claim in progress under a live lease is kept past its TTL until the lease runs out (CONTRACT.md, stage 5)',
          { expected: 'HTTP 409 (the first request is still in flight)', got: 'a second execution waiting in the core' },
        )
      expectProblem(seen.answered[0]!, 409, "a duplicate of a request still in flight gets 409, also once the key's TTL has passed")
      await bank.core({ hold: false })
      first = await held.reply
    } finally {
      await bank.core({ hold: false })
    }
    expectStatus(first, 201, 'the first request, still the holder of its claim, completes')
    await expectExactlyOnce(bank, before, body, first)
  },
}

export const expiryChecks: Check[] = [expiryWithoutPurge, ttlFromFirstRequest, inFlightAcrossTtl]
