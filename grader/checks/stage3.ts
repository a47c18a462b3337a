// Stage 3: a claim is in_progress until the money commits, a duplicate in
// flight gets 409, and a crash or an expired lease never leaves the transfer
// stuck, lost or doubled.
//
// Every race here is opened on purpose: the core-banking simulator is held
// shut, so the first request sits between its claim and its commit for as
// long as the check needs. The checks never sleep and hope; they poll the
// core's `inflight` count to know where each request is.
import { listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import type { TransferBody } from '#harness/bankClient.ts'
import { expectEqual, expectProblem, expectStatus, fail, type Check } from '../engine/check.ts'
import { CheckFailure } from '#harness/failure.ts'
import type { Reply } from '#harness/http.ts'
import { expectChangedBodyRefused, expectNotExecutedAgain, is2xx, newRows, openParties } from './setup.ts'
import { answeredOrInCore, expectExactlyOnce, holdInCore, plan } from './inFlight.ts'
import { rowChecks } from './keyRowStates.ts'
import { heldClaim, leaseBank, leaseChecks, NO_LEASE_AFTER_MS, notJudgedWithoutTakeover } from './leases.ts'
import { elapsed, firstOutside, lastInside, momentOf, retriesAcross, span } from './timeline.ts'
import { courseRule } from '../engine/courseRule.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage3.<key>).
const say = phrases('stage3', {
  status409or201: 'HTTP 409 or 201',
  duplicateReachedCore: 'a duplicate got past the key and reached the core while the first request was still running: it is executing a second time',
  every409AtOnce: 'every duplicate answered 409 at once',
  duplicateWaiting: 'a duplicate waiting in the core',
  inFlight409: 'a duplicate sent while the first request is still in flight gets 409 Conflict',
  noRetryAfter: 'a 409 came without Retry-After (see retry-after-remaining-lease)',
  firstCompletes: 'the first request completes once the core lets it through',
  toldDone: 'once the first request completed, a duplicate is told so (2xx), no longer 409',
  inFlightNote: '{copies} duplicate(s) in flight → 409; after completion → {status}; 1 ledger row',
  differentExecuting: 'a different payload under a key in flight got past the key and is executing',
  expected422AtOnce: 'HTTP 422 at once',
  requestWaiting: 'a request waiting in the core',
  wins422: 'a different payload must get 422 even while the first request is in flight: 422 wins over 409 (the client must fix the request, not wait)',
  different422: 'the same key with a different payload gets 422 Unprocessable Content',
  answeredAfterKill: 'the request held in the core answered although its server was killed',
  after409OrExecutes: 'after the crash a retry gets 409 (the claim is still leased) or executes',
  farRetry: 'after the crash a retry {span} after the claim got HTTP {status}',
  noLease:
    "no lease: after the crash, retries {stillAt} after the claim (the end of its {leaseMs} ms lease) and {span} after it still got 409: far past its lease, the crashed request's claim still held its key, and no retry could take it over",
  once201: 'HTTP 201 once the {leaseMs} ms lease has run out',
  conflicts: 'HTTP 409, {count} times',
  longLeaseNote:
    'the crashed claim was still held at the end of its {leaseMs} ms lease ({stillAt}), and taken over {span} after it: the lease is longer than LAB_LEASE_MS (see lease-length)',
  stillHeld:
    "after the crash, retries up to {until} after the claim, past the end of its {leaseMs} ms lease, still got 409: the crashed request's claim still held its key, and no retry could take it over",
  markedDoneEarly: 'after the crash the retry was answered {status}, but no money ever moved: the key was marked done before the transfer committed',
  retryExecutes: 'the retry executes the transfer (HTTP 201, one ledger row)',
  noRow: 'HTTP {status}, no ledger row',
  oneMoreDone: 'one more retry after success is told it is done',
  crashNote: 'killed with the transfer in the core; after restart: {conflicts}× 409, then {status} {after} after the claim; 1 ledger row',
  faultRefused: 'PUT /admin/core {"crashAfterCommit": true} was refused: the server must offer this fault point (CONTRACT.md, Admin)',
  faultNotArmed: 'PUT /admin/core {"crashAfterCommit": true} did not arm the fault point: the server must offer it (CONTRACT.md, Admin)',
  armedInAnswer: '"crashAfterCommit": true in the answer',
  answeredAnyway: 'the transfer was answered although crashAfterCommit was armed: the server does not kill itself after a commit (CONTRACT.md, Admin)',
  neverCommitted: 'the first request with a fresh key was answered HTTP {status}: it never committed, so the fault point never fired',
  connectionDrops: 'the connection drops: the process dies after the commit',
  stillRuns: 'the connection dropped but the server process still runs: crashAfterCommit must kill it',
  commitRows: 'the transfer killed after its commit left {rows} ledger rows: the bank commits before the fault point fires',
  oneRow: '1 ledger row',
  rowsShort: '{rows} rows',
  when: '{after} after the first request (lease {leaseMs} ms)',
  committedRetry: 'the retry {when} of a transfer that committed before its answer was lost',
  stillInProgress:
    "the retry {when} got 409: the money committed before the crash, but the key still says in progress. Complete the key in the money's transaction",
  doneAnswer: 'a 2xx that says it is done (200 already processed, or the stored response replayed)',
  toldItIsDone: 'the retry {when} of a transfer that committed is told it is done',
  namesCommitted: 'a replayed answer names the transfer that committed before the crash',
  statusAt: '{status} at {after}',
  lostAnswerNote: 'killed after the commit, before the answer; after restart: {seen}; 1 ledger row',
  conflictUntilTakeover: 'while the first request runs, a retry gets 409 until its lease expires, then takes the claim over',
  takeoverExecutes: 'the retry that took over the expired claim executes the transfer',
  slowCommitted:
    'the slow original committed too: the money moved {rows} times. Completing must check the request still owns its claim, in the money transaction',
  rolledBack: "the original's commit rolled back (e.g. 409)",
  statusRows: 'HTTP {status}, {rows} ledger rows',
  namesTheOne: 'a 201 to the slow original must name the one transfer that happened',
  takeoverNote: 'lease {leaseMs} ms expired; the retry took over and executed; the original answered {status}; 1 ledger row',
  core503: 'the core simulator was told to fail this call: the bank answers 503',
  mustExecute: 'nothing moved at the 503, so the retry must execute the transfer',
})

const inFlightDuplicate: Check = {
  id: 'in-flight-duplicate-409',
  title: 'A duplicate sent while the first request is in flight gets 409, and does not execute',
  points: 6,
  hint: 'Write the claim as in_progress and commit it before the transfer runs; a duplicate that finds an in_progress row (lease not expired) answers requestInFlight().',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a, b)
    const before = await bank.ledger()
    const copies = ctx.rng.int(1, 3)
    let first: Reply
    try {
      const { reply: firstReply } = await holdInCore(bank, () => bank.transfer(a.customer, body, { key }))
      const spec = bank.postSpec(a.customer, '/transfers', body, { key })
      const seen = await answeredOrInCore(bank, bank.burst(Array.from({ length: copies }, () => spec)), 1)
      if ('reachedCore' in seen)
        fail(say('duplicateReachedCore'), {
          expected: say('every409AtOnce'),
          got: say('duplicateWaiting'),
        })
      for (const reply of seen.answered) expectProblem(reply, 409, say('inFlight409'))
      // Retry-After is a course rule with a check of its own; here it is only seen.
      if (seen.answered.some((r) => r.headers['retry-after'] === undefined)) ctx.note(say('noRetryAfter'))
      await bank.core({ hold: false })
      first = await firstReply
    } finally {
      await bank.core({ hold: false })
    }
    expectStatus(first, 201, say('firstCompletes'))
    const later = await bank.transfer(a.customer, body, { key })
    expectStatus(later, [200, 201], say('toldDone'))
    await expectExactlyOnce(bank, before, body, first)
    ctx.note(say('inFlightNote', { copies, status: later.status }))
  },
}

const inFlightDifferentPayload: Check = {
  id: 'in-flight-different-payload-422',
  title: 'A different payload under a key still in flight gets 422, not 409',
  points: 4,
  hint: 'Compare the fingerprint before looking at the status: a different body is a client error (422) whether or not the first request has finished.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a, b)
    // The teller's correction: same key, one field changed.
    const amended: TransferBody = ctx.rng.pick([
      { ...body, amount: body.amount + ctx.rng.amount(100, 50_000) },
      { ...body, to: b.accounts.find((x) => x !== body.to)! },
      { ...body, memo: `correction ${ctx.rng.int(1, 999)}` },
    ])
    const before = await bank.ledger()
    let first: Reply
    try {
      const { reply: firstReply } = await holdInCore(bank, () => bank.transfer(a.customer, body, { key }))
      const seen = await answeredOrInCore(
        bank,
        bank.transfer(a.customer, amended, { key }).then((r) => [r]),
        1,
      )
      if ('reachedCore' in seen)
        fail(say('differentExecuting'), {
          expected: say('expected422AtOnce'),
          got: say('requestWaiting'),
        })
      const [reply] = seen.answered
      if (reply!.status === 409)
        fail(courseRule('unprocessableOverConflict', say('wins422')), { exchange: reply!.exchange, expected: 'HTTP 422', got: 'HTTP 409' })
      expectChangedBodyRefused(reply!, say('different422'), ctx.note)
      await bank.core({ hold: false })
      first = await firstReply
    } finally {
      await bank.core({ hold: false })
    }
    expectStatus(first, 201, say('firstCompletes'))
    await expectExactlyOnce(bank, before, body, first)
  },
}

/** The lease on a real clock (on a controlled one, the default: periodBank). */
const CRASH_LEASE_MS = 1_000
const AFTER_LEASE_MS = 3_000

const crashMidTransfer: Check = {
  id: 'crash-mid-transfer',
  title: 'A server killed mid-transfer and restarted: retries move the money exactly once, within the lease',
  points: 8,
  hint: 'The claim must not say "done" before the money commits (complete it inside the money transaction), and it needs a lease so that a retry can take over a claim whose process died.',
  timeoutMs: 40_000,
  timed: true,
  async run(ctx) {
    // On a controlled clock the shared server (it is started again below, and
    // again by the runner if a later check finds it dead), with its default lease.
    const { bank, a, body, key, before, first, claim, leaseMs } = await heldClaim(ctx, CRASH_LEASE_MS)
    // SIGKILL: no handler runs, nothing is cleaned up, the claim stays in the database.
    await bank.server.crash()
    if (
      await first.then(
        () => true,
        () => false,
      )
    )
      fail(say('answeredAfterKill'))
    // The same instance, started again on the same database file (its port may
    // change). Retries: inside the dead claim's lease they may get 409; by its end one executes.
    await bank.server.start()
    const bound = leaseMs + AFTER_LEASE_MS
    let reply: Reply | undefined
    let conflicts = 0
    for (const at of retriesAcross(ctx.clock, claim, leaseMs, 100, bound)) {
      await ctx.clock.moveTo(at)
      reply = await bank.transfer(a.customer, body, { key })
      if (is2xx(reply)) break
      if (reply.status !== 409)
        fail(say('after409OrExecutes'), {
          exchange: reply.exchange,
          expected: say('status409or201'),
          got: `HTTP ${reply.status}`,
        })
      conflicts++
    }
    if (reply && !is2xx(reply) && ctx.clock.controlled) {
      // Refused at the lease's end. A lease that ends later is lease-length's to judge; a claim still held 23 h after it was made is this check's.
      const stillAt = ctx.clock.now()
      await ctx.clock.moveTo(claim.to + NO_LEASE_AFTER_MS)
      const far = await bank.transfer(a.customer, body, { key })
      if (!is2xx(far) && far.status !== 409)
        fail(say('farRetry', { span: span(NO_LEASE_AFTER_MS), status: far.status }), {
          exchange: far.exchange,
          expected: 'HTTP 201',
          got: `HTTP ${far.status}`,
        })
      if (far.status === 409)
        fail(courseRule('lease', say('noLease', { stillAt: elapsed(claim, stillAt), leaseMs, span: span(NO_LEASE_AFTER_MS) })), {
          exchange: far.exchange,
          expected: say('once201', { leaseMs }),
          got: say('conflicts', { count: conflicts + 1 }),
        })
      ctx.note(say('longLeaseNote', { leaseMs, stillAt: elapsed(claim, stillAt), span: span(NO_LEASE_AFTER_MS) }))
      reply = far
    }
    if (!reply || !is2xx(reply))
      fail(courseRule('lease', say('stillHeld', { until: elapsed(claim, ctx.clock.now()), leaseMs })), {
        exchange: reply?.exchange,
        expected: say('once201', { leaseMs }),
        got: say('conflicts', { count: conflicts }),
      })
    const rows = newRows(before, await bank.ledger()).filter((e) => e.from === body.from && e.to === body.to)
    if (rows.length === 0)
      fail(say('markedDoneEarly', { status: reply.status }), {
        exchange: reply.exchange,
        expected: say('retryExecutes'),
        got: say('noRow', { status: reply.status }),
      })
    await expectExactlyOnce(bank, before, body, reply)
    const again = await bank.transfer(a.customer, body, { key })
    expectStatus(again, [200, 201], say('oneMoreDone'))
    await expectExactlyOnce(bank, before, body, reply)
    ctx.note(say('crashNote', { conflicts, status: reply.status, after: elapsed(claim, ctx.clock.now()) }))
  },
}

/** The lease on a real clock (on a controlled one, the default: periodBank), and the margin of its probes there. */
const LOST_ANSWER_LEASE_MS = 4_000
const LOST_ANSWER_MARGIN_MS = 500

const crashAfterCommit: Check = {
  id: 'crash-after-commit',
  title: 'A server killed after the money committed, before it answered: after restart the retry is told it is done, and nothing moves again',
  points: 4,
  hint: 'Complete the key (and, from stage 4, store the response) inside the money transaction, through the callback of op.execute(): the instant the money commits, the key must say done. Completing after execute() returns leaves a moment where the money moved and the key still says in_progress, and a crash there makes the retry execute again once the lease runs out.',
  timeoutMs: 40_000,
  timed: true,
  async run(ctx) {
    // On a controlled clock the shared server (killed below and started again), with its default lease.
    const { bank, a, b, leaseMs } = await leaseBank(ctx, LOST_ANSWER_LEASE_MS)
    const { body, key } = plan(ctx, a, b)
    const before = await bank.ledger()
    // The fault point (CONTRACT.md, Admin): the next commit kills the process before it answers.
    const armed = await bank
      .core({ crashAfterCommit: true })
      .catch((error: unknown) => fail(say('faultRefused'), error instanceof CheckFailure ? error.details : {}))
    if (armed.crashAfterCommit !== true)
      fail(say('faultNotArmed'), {
        expected: say('armedInAnswer'),
        got: JSON.stringify(armed),
      })
    const { at: sent, value: first } = await momentOf(ctx.clock, () =>
      bank.transfer(a.customer, body, { key }).then(
        (reply) => reply,
        (error: Error) => error,
      ),
    )
    if (!(first instanceof Error)) {
      // It did not die: disarmed, so that no later request on this server does.
      await bank.core({ crashAfterCommit: false })
      fail(is2xx(first) ? say('answeredAnyway') : say('neverCommitted', { status: first.status }), {
        exchange: first.exchange,
        expected: say('connectionDrops'),
        got: `HTTP ${first.status}`,
      })
    }
    if (!(await bank.server.exitsWithin(10_000))) fail(say('stillRuns'))
    // The same instance, started again on the same database (its port may change).
    await bank.server.start()
    const committed = newRows(before, await bank.ledger()).filter((e) => e.from === body.from && e.to === body.to)
    if (committed.length !== 1)
      fail(say('commitRows', { rows: committed.length }), {
        expected: say('oneRow'),
        got: say('rowsShort', { rows: committed.length }),
      })
    const row = committed[0]!
    // The retries: at once, at the lease's last moment and at its end (on a
    // real clock, a margin inside and outside it). The lease must not matter:
    // the key is done, so no retry waits for it or takes it over.
    const seen: Phrase[] = []
    for (const at of [sent.to, lastInside(ctx.clock, sent, leaseMs, LOST_ANSWER_MARGIN_MS), firstOutside(ctx.clock, sent, leaseMs, LOST_ANSWER_MARGIN_MS)]) {
      await ctx.clock.moveTo(at)
      const retry = await bank.transfer(a.customer, body, { key })
      const when = say('when', { after: elapsed(sent, ctx.clock.now()), leaseMs })
      await expectNotExecutedAgain(bank, before, 1, retry, say('committedRetry', { when }))
      if (retry.status === 409) fail(say('stillInProgress', { when }), { exchange: retry.exchange, expected: say('doneAnswer'), got: 'HTTP 409' })
      expectStatus(retry, [200, 201], say('toldItIsDone', { when }))
      if (retry.json?.id !== undefined) expectEqual(retry.json.id, row.id, say('namesCommitted'), retry.exchange)
      seen.push(say('statusAt', { status: retry.status, after: elapsed(sent, ctx.clock.now()) }))
    }
    ctx.note(say('lostAnswerNote', { seen: listOf(seen) }))
  },
}

/** The lease on a real clock (on a controlled one, the default: periodBank). */
const LEASE_MS = 600

const leaseExpired: Check = {
  id: 'lease-expired-owner-check',
  title: "A retry takes over an expired lease; the slow original's late commit moves nothing",
  points: 7,
  hint: 'Completing must check, inside the money transaction, that this request still owns the claim (owner token, status in_progress); if not, throw so the transfer rolls back.',
  timeoutMs: 30_000,
  timed: true,
  async run(ctx) {
    const { bank, body, before, first, claim, send, leaseMs } = await heldClaim(ctx, LEASE_MS)
    let slow: Reply
    let retry: Reply
    try {
      // Retry until the lease has run out and a retry takes the claim over (it then waits in the core too).
      let retryReply: Promise<Reply> | undefined
      for (const at of retriesAcross(ctx.clock, claim, leaseMs, 50, leaseMs + AFTER_LEASE_MS)) {
        await ctx.clock.moveTo(at)
        const attempt = send()
        const seen = await answeredOrInCore(
          bank,
          attempt.then((r) => [r]),
          1,
        )
        if ('reachedCore' in seen) {
          retryReply = attempt
          break
        }
        expectProblem(seen.answered[0]!, 409, say('conflictUntilTakeover'))
      }
      // No takeover, no superseded original to judge: whether the lease ends, and when, is another check's.
      if (!retryReply) return await notJudgedWithoutTakeover(ctx, bank, claim, leaseMs, ctx.clock.now(), send, [first])
      // Both are in the core now: the original (lease lost) and the retry (lease held).
      await bank.core({ hold: false })
      ;[slow, retry] = await Promise.all([first, retryReply])
    } finally {
      await bank.core({ hold: false })
    }
    expectStatus(retry, 201, say('takeoverExecutes'))
    const rows = newRows(before, await bank.ledger()).filter((e) => e.from === body.from && e.to === body.to)
    if (rows.length > 1)
      fail(say('slowCommitted', { rows: rows.length }), {
        exchange: slow.exchange,
        expected: say('rolledBack'),
        got: say('statusRows', { status: slow.status, rows: rows.length }),
      })
    await expectExactlyOnce(bank, before, body, retry)
    if (slow.status === 201) expectEqual(slow.json?.id, retry.json?.id, say('namesTheOne'), slow.exchange)
    ctx.note(say('takeoverNote', { leaseMs, status: slow.status }))
  },
}

const coreFailure: Check = {
  id: 'core-failure-releases',
  title: 'After a 503 from the core, a retry executes: exactly one transfer',
  points: 5,
  hint: 'A 5xx moved no money and leaves the outcome open: release the claim (delete your in_progress row) so the retry runs again.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const { body, key } = plan(ctx, a, b)
    const before = await bank.ledger()
    let retry: Reply
    await bank.core({ failNext: 1 })
    try {
      const failed = await bank.transfer(a.customer, body, { key })
      expectProblem(failed, 503, say('core503'))
      retry = await bank.transfer(a.customer, body, { key })
    } finally {
      await bank.core({ failNext: 0 })
    }
    // Replaying the 503 is what draft-07 §2.6 allows and the course forbids.
    const why = say('mustExecute')
    expectStatus(retry, 201, retry.status === 503 ? courseRule('failuresNotStored', why) : why)
    await expectExactlyOnce(bank, before, body, retry)
  },
}

export const stage3: Check[] = [
  inFlightDuplicate,
  inFlightDifferentPayload,
  crashMidTransfer,
  crashAfterCommit,
  leaseExpired,
  coreFailure,
  ...leaseChecks,
  ...rowChecks,
]
