// Stage 5, retention: a key lives LAB_KEY_TTL_MS after its first request,
// then the same key is a new request, and expired rows are purged.
//
// These checks start their own instance with a short TTL and move the
// grade's clock (timeline.ts): a key stamped at t is alive at t + TTL - 1 and
// gone at t + TTL. On a real clock the server stamps a key between the moment
// we send its first request and the moment we read the answer, so an answer
// read before (sent + TTL) was decided while the key was alive, and a request
// sent after (answered + TTL) arrives after it expired. Whether a key was
// remembered is judged by the body bytes and the ledger, not by the
// Idempotent-Replayed marker, which is stage 4's business.
import pLimit from 'p-limit'
import { setTimeout as sleep } from 'node:timers/promises'
import type { TransferBody } from '#harness/bankClient.ts'
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import { expectEqual, expectStatus, fail, type Check, type CheckContext } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'
import { decidedInside, elapsed, firstOutside, lastInside, momentOf, span, type Moment } from './timeline.ts'
import { DEFAULT_KEY_TTL_MS, expectChangedBodyRefused, expectConsistent, openParties, periodBank, rowsBetween } from './setup.ts'
import { describeRows as describe, layerRows, totalRows as total } from './layerRows.ts'
import { purgeIntervalMs } from '../model/contract.ts'
import { isReplay } from './replies.ts'
import { expiryChecks } from './stage5Expiry.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage5Retention.<key>).
const say = phrases('stage5Retention', {
  mustForget: '{what}: the key has expired, so the server must have forgotten it and executed the request as new',
  executedAgainNew: 'HTTP 201, executed again (a new transfer)',
  firstAgain: 'HTTP {status}, the first response again',
  executesAsNew: '{what} executes as a new transfer',
  newId: '{what}: a new execution has a new transfer id',
  transferExecutes: 'the transfer executes',
  tooSlow: '{what} was answered {after} after the first request, past the {ttlMs} ms TTL: the server is too slow to grade on the real clock',
  alive: '{what}, {after} after the first request (TTL {ttlMs} ms)',
  aRetry: 'a retry',
  forgotEarly: '{what} executed again: the server forgot the key before its TTL (is expires_at in milliseconds?)',
  firstNothingExecuted: 'the first response again, nothing executed',
  newTransfer: 'HTTP {status}, a new transfer',
  firstWhileAlive: '{what} gets the first response back while its key lives',
  firstBodyExactly: 'HTTP {status} with the first body, byte for byte',
  unmarked: "{count} replay(s) without Idempotent-Replayed: true (stage 4's marker; retention itself held)",
  otherAmount: 'the same key with another amount',
  movedNoMoney: 'the retries within the TTL moved no money',
  transferNExecutes: 'transfer {n} executes',
  key2: 'key 2, used once and resent {after} later (TTL {ttlMs} ms)',
  retryWithin: 'a retry {after} after the first request, within the TTL, gets the first response back',
  firstBody: 'HTTP {status} with the first body',
  extended:
    "a retry sent {after} after the first request still got the first response back, although the TTL is {ttlMs} ms. The client had retried every {everyMs} ms meanwhile: retries must not extend a key's life, or a client that keeps retrying keeps its key forever",
  executedAgain: 'HTTP 201, executed again',
  forgottenBefore: 'key 1 was forgotten {after} after its first request, before its {ttlMs} ms TTL',
  key1: 'key 1 after its TTL',
  onceEach: 'key {n}: once before expiry, once after',
  movedTwice: "a retry {after} after the first request moved ₩{amount} a second time: retention must outlast every client's retries",
  depositTtlAfterAll: 'a deposit a whole TTL after every earlier request executes (a purge of either cadence runs here)',
  depositToExpire: 'a deposit under the key to expire executes',
  depositTtlAfterThat: 'a deposit a whole TTL after that one executes (a purge of either cadence runs here again)',
  depositIntervalAfter: 'a deposit one purge interval after the key expired executes',
  capOutlived:
    "with the default {ttl} TTL, a key still has its row {cap} after it expired, with a request now, though expired keys were purged with a 400 ms TTL: the purge's interval must be min(TTL, 60 s), here 60 s, not the TTL (a purge once per TTL last ran a second before this key expired)",
  noRowHolding: 'no row holding {key}',
  capNote: "with the default {ttl} TTL, a key's row gone within {cap} of its expiry",
  eachExecutes: 'each request, under its own key, executes',
  noRows: "after {count} requests with keys, no table of the layer in the bank's database has any row ({rows}): keep the keys in the bank's database",
  depositAfterTtl: 'a deposit after the TTL',
  capRealClock: 'the 60 s cap not judged: the clock is the real one',
  purgeNote: '{count} keys with a {ttlMs} ms TTL: {before} row(s) before expiry, {after} after ({rows}); {capped}',
  stillThere:
    "{count} keys expired {ago} ms ago; a request came after that, and {intervalMs} ms more passed (the course's purge interval, min(TTL, 60 s)), yet their rows are still there",
  atMostRows: 'at most {maxRows} rows within {intervalMs} ms of a request after expiry',
  notPurged: "{stillThere}: the table is not purged within the course's interval",
  slower: "{stillThere}: the table is not purged within the course's interval. A purge does run, but slower: the rows were {stillAt}gone {goneAt} after",
  stillAtEarlier: 'still there {span} after they expired, and ',
  neverPurged:
    '{stillThere}; they were still there {spans} after they expired, each time after a request: no purge deletes them, the key table grows without bound',
})

/** The first response again: its status and its body bytes. */
const sameAnswer = (reply: Reply, first: Reply) => reply.status === first.status && reply.text === first.text

/** The same key after its TTL: executed again, as a new transfer with a new id (expiry is a course rule). */
function expectNewExecution(reply: Reply, first: Reply, what: Line): void {
  if (sameAnswer(reply, first) || reply.status === 422 || reply.status === 409)
    fail(courseRule('expiry', say('mustForget', { what })), {
      exchange: reply.exchange,
      expected: say('executedAgainNew'),
      got: sameAnswer(reply, first) ? say('firstAgain', { status: reply.status }) : `HTTP ${reply.status}`,
    })
  expectStatus(reply, 201, say('executesAsNew', { what }))
  if (reply.json?.id === first.json.id) fail(say('newId', { what }), { exchange: reply.exchange })
}

/** A short-TTL instance of the graded server, on a fresh database, with two funded customers. */
async function shortTtlBank(ctx: CheckContext, ttlMs: number, accountsEach: number) {
  const bank = await ctx.startServer({ settings: { keyTtlMs: ttlMs } })
  const [a, b] = await openParties(ctx, 2, accountsEach, bank)
  return { bank, a, b }
}

/** A server whose TTL the check knows (periodBank: `shortMs` on a real clock), with two funded customers. */
async function ttlBank(ctx: CheckContext, shortMs: number, accountsEach: number) {
  const { bank, ttlMs } = await periodBank(ctx, { ttlMs: shortMs })
  const [a, b] = await openParties(ctx, 2, accountsEach, bank)
  return { bank, a, b, ttlMs }
}

const replayBeforeExpiry: Check = {
  id: 'replay-before-expiry',
  title: 'Within the TTL a retry is replayed and a changed body is refused',
  points: 4,
  hint: "expires_at = the first request's time + LAB_KEY_TTL_MS, in milliseconds (Date.now() is in ms; check the unit).",
  timeoutMs: 20_000,
  timed: true,
  async run(ctx) {
    const { bank, a, b, ttlMs } = await ttlBank(ctx, 3_000, 1)
    const body = { from: a.accounts[0]!, to: b.accounts[0]!, amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    const { at: stamped, value: first } = await momentOf(ctx.clock, () => bank.transfer(a.customer, body, { key }))
    expectStatus(first, 201, say('transferExecutes'))
    const alive = (what: Line, sent: Moment) => {
      if (!decidedInside(ctx.clock, stamped, ttlMs, sent.to)) fail(say('tooSlow', { what, after: elapsed(stamped, sent.to), ttlMs }))
      return say('alive', { what, after: elapsed(stamped, sent.from), ttlMs })
    }
    // Retries at once, a little later and, on a controlled clock, at the TTL's
    // last millisecond: a TTL in the wrong unit (seconds taken as ms) has run
    // out by the later ones. On a real clock they stay early in the TTL.
    const steps = [0, ctx.rng.int(100, 200), ctx.rng.int(100, 200)]
    const at = (i: number) => stamped.to + steps.slice(0, i + 1).reduce((sum, ms) => sum + ms, 0)
    const moments = ctx.clock.controlled ? [at(0), at(1), at(2), lastInside(ctx.clock, stamped, ttlMs, 0)] : [at(0), at(1), at(2)]
    let unmarked = 0
    for (const moment of moments) {
      await ctx.clock.moveTo(moment)
      const { at: sent, value: retry } = await momentOf(ctx.clock, () => bank.transfer(a.customer, body, { key }))
      const what = alive(say('aRetry'), sent)
      // Judged by the body alone here; the ledger is read once at the end.
      if (retry.status === 201 && !sameAnswer(retry, first))
        fail(say('forgotEarly', { what }), {
          exchange: retry.exchange,
          expected: say('firstNothingExecuted'),
          got: say('newTransfer', { status: retry.status }),
        })
      if (!sameAnswer(retry, first))
        fail(say('firstWhileAlive', { what }), {
          exchange: retry.exchange,
          expected: say('firstBodyExactly', { status: first.status }),
          got: `HTTP ${retry.status}`,
        })
      if (!isReplay(retry)) unmarked++
    }
    if (unmarked) ctx.note(say('unmarked', { count: unmarked }))
    const { at: sent, value: changed } = await momentOf(ctx.clock, () => bank.transfer(a.customer, { ...body, amount: body.amount + 100 }, { key }))
    expectChangedBodyRefused(changed, alive(say('otherAmount'), sent), ctx.note)
    expectEqual(rowsBetween(await bank.ledger(), body.from, body.to).length, 1, say('movedNoMoney'))
  },
}

const newExecutionAfterExpiry: Check = {
  id: 'new-execution-after-expiry',
  title: 'After the TTL, counted from the first request, the same key is a new request',
  points: 6,
  hint: 'Expiry counts from the FIRST request and is never extended by retries; an expired row is treated as absent (delete it, then claim anew).',
  timeoutMs: 20_000,
  timed: true,
  async run(ctx) {
    const { bank, a, b, ttlMs } = await ttlBank(ctx, 1_000, 2)
    const retryEveryMs = ttlMs / 10
    const send = (body: TransferBody, key: string) => momentOf(ctx.clock, () => bank.transfer(a.customer, body, { key }))
    // Key 1 is retried every tenth of its TTL, like an impatient client; key 2 is used once and left alone.
    const keys = [ctx.rng.uuid(), ctx.rng.uuid()]
    // Each body executes twice: at most ₩50,000, so twice fits any opening balance (at least SMALLEST_OPENING, setup.ts).
    const bodies = [0, 1].map((i) => ({ from: a.accounts[i]!, to: b.accounts[i]!, amount: ctx.rng.amount(1_000, 50_000) }))
    const firsts = [await send(bodies[0]!, keys[0]!), await send(bodies[1]!, keys[1]!)]
    firsts.forEach((f, i) => expectStatus(f.value, 201, say('transferNExecutes', { n: i + 1 })))
    const [one, two] = firsts as [(typeof firsts)[0], (typeof firsts)[0]]
    // Retries of key 1 every tenth of the TTL; on a controlled clock the last two at the TTL's last millisecond and at its end.
    const expiry = firstOutside(ctx.clock, one.at, ttlMs, 0)
    function* schedule() {
      for (let at = one.at.to + retryEveryMs; ; at += retryEveryMs) {
        if (ctx.clock.controlled && at >= expiry - 1) return yield* [expiry - 1, expiry]
        yield at
      }
    }
    const retries: Array<Awaited<ReturnType<typeof send>>> = []
    for (const at of schedule()) {
      await ctx.clock.moveTo(at)
      const retry = await send(bodies[0]!, keys[0]!)
      retries.push(retry)
      if (!sameAnswer(retry.value, one.value) || retry.at.from >= expiry) break
    }
    await ctx.clock.moveTo(firstOutside(ctx.clock, two.at, ttlMs, 0))
    const late = await send(bodies[1]!, keys[1]!)

    // Key 2 first: a key that is never touched again must expire at all.
    expectNewExecution(late.value, two.value, say('key2', { after: elapsed(two.at, late.at.from), ttlMs }))
    // Key 1: replayed while alive; then new, on time, although it was retried all along.
    const renewed = retries.at(-1)!
    for (const r of retries.slice(0, -1))
      if (!sameAnswer(r.value, one.value))
        fail(say('retryWithin', { after: elapsed(one.at, r.at.from) }), {
          exchange: r.value.exchange,
          expected: say('firstBody', { status: one.value.status }),
          got: `HTTP ${r.value.status}`,
        })
    if (sameAnswer(renewed.value, one.value))
      fail(courseRule('expiry', say('extended', { after: elapsed(one.at, renewed.at.from), ttlMs, everyMs: retryEveryMs })), {
        exchange: renewed.value.exchange,
        expected: say('executedAgain'),
        got: say('firstAgain', { status: renewed.value.status }),
      })
    if (decidedInside(ctx.clock, one.at, ttlMs, renewed.at.to) && renewed.at.to < expiry)
      fail(say('forgottenBefore', { after: elapsed(one.at, renewed.at.to), ttlMs }), {
        exchange: renewed.value.exchange,
      })
    expectNewExecution(renewed.value, one.value, say('key1'))

    const ledger = await bank.ledger()
    bodies.forEach((body, i) => expectEqual(rowsBetween(ledger, body.from, body.to).length, 2, say('onceEach', { n: i + 1 })))
    expectConsistent(ledger)
    ctx.note(say('movedTwice', { after: elapsed(one.at, renewed.at.from), amount: bodies[0]!.amount }))
  },
}

/** The course's purge interval (CONTRACT.md, stage 5): the first request after min(TTL, 60 s) since the last purge purges. */
/** When the rows outlived that interval, later moments (after their expiry), each with a request: a slower purge, or none. */
const LATER_MS = [60_000, 3_600_000, 86_400_000]

/** The purge interval's cap, which binds once the TTL is longer (the bank's default TTL, 24 h). */
const PURGE_CAP_MS = purgeIntervalMs(Number.POSITIVE_INFINITY)

/**
 * The layer's rows (those holding `key`, or all), read again every 50 ms until
 * `purged` holds or `waitMs` of real time has passed: once the grader's clock
 * says a purge is due, a purge on a timer still does its work in real time.
 */
async function rowsOncePurged(
  bank: CheckContext['bank'],
  purged: (rows: Record<string, number>) => boolean,
  waitMs: number,
  key?: string,
): Promise<Record<string, number>> {
  const deadline = Date.now() + waitMs
  for (;;) {
    const rows = await layerRows(bank, key)
    if (purged(rows) || Date.now() > deadline) return rows
    await sleep(50)
  }
}

/**
 * With a TTL longer than the cap, the purge still comes once per cap, not once
 * per TTL. On the grade's bank (its TTL the default 24 h), the grader places
 * the purges that either cadence must run: a request a whole TTL after every
 * earlier one, then another a whole TTL after that. A key made a second after
 * the first expires a second after the second: a cap later, with a request
 * then, only a purge once per TTL (or slower) has left its row. Run once the
 * purge is known to run at a short TTL. Returns the note.
 */
async function purgedWithinTheCap(ctx: CheckContext): Promise<Line> {
  const bank = ctx.bank
  const ttlMs = DEFAULT_KEY_TTL_MS
  const [a] = await openParties(ctx, 1, 1)
  const deposit = async (what: Phrase, key = ctx.rng.uuid()) =>
    expectStatus(await bank.deposit(a.customer, { to: a.accounts[0]!, amount: ctx.rng.amount() }, { key }), 201, what)
  await ctx.clock.advance(ttlMs)
  const purged = ctx.clock.now()
  await deposit(say('depositTtlAfterAll'))
  await ctx.clock.advance(1_000)
  const key = ctx.rng.uuid()
  await deposit(say('depositToExpire'), key)
  const expiresAt = ctx.clock.now() + ttlMs
  await ctx.clock.moveTo(purged + ttlMs)
  await deposit(say('depositTtlAfterThat'))
  await ctx.clock.moveTo(expiresAt + PURGE_CAP_MS)
  await deposit(say('depositIntervalAfter'))
  // A purge on a timer gets up to 10 real seconds for its work, as below.
  const left = await rowsOncePurged(bank, (rows) => total(rows) === 0, 10_000, key)
  if (total(left) > 0)
    fail(courseRule('purge', say('capOutlived', { ttl: span(ttlMs), cap: span(PURGE_CAP_MS) })), {
      expected: say('noRowHolding', { key }),
      got: describe(left),
    })
  return say('capNote', { ttl: span(ttlMs), cap: span(PURGE_CAP_MS) })
}

const purgeBounded: Check = {
  id: 'purge-bounded',
  title: 'Expired keys are purged: N expired keys leave at most a few rows',
  points: 4,
  hint: 'Delete expired rows (completed, or in progress with the lease run out too), lazily from claim() or on a timer, at least once per min(TTL, 60 s).',
  timeoutMs: 40_000,
  needs: 'database',
  timed: true,
  async run(ctx) {
    const ttlMs = 400
    const maxRows = 3
    const intervalMs = purgeIntervalMs(ttlMs)
    const { bank, a } = await shortTtlBank(ctx, ttlMs, 2)
    const count = ctx.rng.int(30, 45)
    // Deposits, and every third a small transfer, each under its own key, four at a time.
    const plans = Array.from({ length: count }, (_, i) =>
      i % 3 === 0
        ? { path: '/transfers', body: { from: a.accounts[0]!, to: a.accounts[1]!, amount: ctx.rng.amount(1_000, 2_000) }, key: ctx.rng.uuid() }
        : { path: '/deposits', body: { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() }, key: ctx.rng.uuid() },
    )
    const limit = pLimit(4)
    const replies = await Promise.all(plans.map((p) => limit(() => bank.send(bank.postSpec(a.customer, p.path, p.body, { key: p.key })))))
    replies.forEach((r) => expectStatus(r, 201, say('eachExecutes')))
    const lastAnswer = ctx.clock.now()
    const expiredAt = lastAnswer + ttlMs
    const stored = await layerRows(bank)
    if (total(stored) === 0) fail(say('noRows', { count, rows: describe(stored) }))
    /** A request under a new key (a lazy purge's chance), then the rows, polled for `waitMs` of real time (a timer's work). */
    const afterRequest = async (waitMs: number) => {
      expectStatus(await bank.deposit(a.customer, { to: a.accounts[0]!, amount: ctx.rng.amount() }, { key: ctx.rng.uuid() }), 201, say('depositAfterTtl'))
      if (ctx.clock.controlled) await ctx.clock.advance(intervalMs)
      return rowsOncePurged(bank, (rows) => total(rows) <= maxRows, waitMs)
    }
    await ctx.clock.moveTo(firstOutside(ctx.clock, { from: lastAnswer, to: lastAnswer }, ttlMs, 0))
    // Every key above has expired. One request under a new key gives a lazy
    // purge its chance; a purge on a timer gets one more interval of the clock
    // (moved at once on a controlled clock) and up to 10 real seconds for its work. Only reads follow.
    const left = await afterRequest(ctx.clock.controlled ? 10_000 : ttlMs + 1_000)
    if (total(left) <= maxRows) {
      // The purge runs: now whether its interval stops at 60 s when the TTL is longer.
      const capped = ctx.clock.controlled ? await purgedWithinTheCap(ctx) : say('capRealClock')
      ctx.note(say('purgeNote', { count, ttlMs, before: total(stored), after: total(left), rows: describe(left), capped }))
      return
    }
    const stillThere = say('stillThere', { count, ago: ctx.clock.now() - expiredAt, intervalMs })
    const details = { expected: say('atMostRows', { maxRows, intervalMs }), got: describe(left) }
    // A real clock cannot be moved a day ahead: what it showed is all there is.
    if (!ctx.clock.controlled) fail(courseRule('purge', say('notPurged', { stillThere })), details)
    // A purge slower than the course's interval, or none at all? The clock moved on, with a request at each step.
    for (const laterMs of LATER_MS) {
      await ctx.clock.moveTo(expiredAt + laterMs)
      const later = await afterRequest(2_000)
      if (total(later) <= maxRows)
        fail(
          courseRule(
            'purge',
            say('slower', {
              stillThere,
              stillAt: laterMs === LATER_MS[0] ? '' : say('stillAtEarlier', { span: span(LATER_MS[LATER_MS.indexOf(laterMs) - 1]!) }),
              goneAt: span(laterMs),
            }),
          ),
          details,
        )
    }
    fail(courseRule('purge', say('neverPurged', { stillThere, spans: listOf(LATER_MS.map(span)) })), { ...details, got: describe(await layerRows(bank)) })
  },
}

export const retentionChecks: Check[] = [replayBeforeExpiry, newExecutionAfterExpiry, purgeBounded, ...expiryChecks]
