// Stage 4: a completed duplicate gets the first response back, exactly: same
// status, same body bytes, same Content-Type and Location, plus
// `Idempotent-Replayed: true`. Never recomputed, never marked on a first answer.
//
// Each check demands its own property only. The ledger judges whether a retry
// executed again; replay-exact judges the headers and replay-marked the marker,
// and every other check only notes a missing header or marker.
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import type { BankClient, Customer, Ledger, TransferBody } from '#harness/bankClient.ts'
import { expectEqual, expectProblem, expectStatus, fail, type Check, type CheckContext } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'
import { expectChangedBodyRefused, expectNotExecutedAgain, freshKey, newRows, openParties } from './setup.ts'
import { expectFirstAnswer, expectMarked, expectOutcomeReplayed, expectReplayOf, expectStoredOutcome, isReplay, replayDeviations } from './replies.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage4.<key>).
const say = phrases('stage4', {
  aTransfer: 'a transfer',
  aDeposit: 'a deposit',
  executes: '{what} executes',
  retryNOf: 'retry {n} of {what}',
  theRetryOf: 'the retry of {what}',
  transferExecutes: 'the transfer executes',
  laterExecutes: 'a later, unrelated transfer executes',
  setupBalance: 'setup: the balance did not change',
  recomputed: 'the replay shows the balance as it is now, not as the transfer left it: it was recomputed, not replayed',
  balanceAfter: 'balanceAfter {balance}, createdAt {createdAt}',
  retryAfterOthers: 'the retry after {count} other transfer(s)',
  balanceNote: 'balance moved from {from} to {now}; the replay still says {said}',
  overdraftRefused: 'a transfer larger than the balance is refused',
  topUpExecutes: 'the top-up deposit executes',
  refusedExecutedAgain: 'the retry of the refused transfer executed again after the top-up: a 402 decided by executing is stored and replayed',
  stored402: 'the stored 402, no transfer',
  transfersInLedger: 'HTTP {status}, {count} transfer(s) in the ledger',
  refusedAfterTopUp: 'the retry of the refused transfer, after the top-up',
  openingPlusTopUp: 'the balance is the opening plus the top-up',
  oneOfSimultaneous: 'one of {copies} simultaneous retries',
  simultaneousN: 'simultaneous retry {i} of {copies}',
  replaysLacked: "the replays had the first answer's status and body bytes, but {deviations} (see replay-exact, replay-marked)",
  simultaneousNote: '{copies} retries at the same instant: {copies} identical replays',
  transferExecutes201: 'a transfer that executes',
  beyondBalance: 'a transfer beyond the balance',
  fromOthers: "a transfer from another client's account",
  toUnknown: 'a transfer to an unknown account',
  core503: 'the core simulator was told to fail this call: the bank answers 503',
  again503: 'the retry after a 503 got the 503 again: a 5xx moved nothing, so it is released, not stored',
  retryExecutes201: 'HTTP 201: the retry executes',
  replayedSuffix: 'HTTP 503 (replayed)',
  after503Executes: 'after a 503 the retry executes (a 5xx is not stored)',
  movedOnce: 'the retry after the 503 moved the money once',
  nextRetry: 'the next retry',
  completed: 'a completed {status}',
  answered: 'a first request answered {status}',
  retryN: 'retry {n}',
  insteadUnder: '{amount} instead of {original} under the key of {first}',
  gotStored: '{what} got the stored response: an answer under a key answers only the body that produced it, another body is a client error',
  gotAgain: '{what} got that answer again, byte for byte: an answer under a key answers only the body that produced it, another body is a client error',
  storedResponse: 'HTTP {status}, the stored response',
  firstBytes: "HTTP {status}, the first answer's bytes",
  replayed: '{got}, replayed',
  changedExecuted:
    '{what} executed: nothing showed the {status} stored with the key (its {replays} retry(ies) got {status} again without Idempotent-Replayed), and the changed body was taken for a new request. A refusal decided by executing is stored like a 201 (see replay-stored-402), and another body under its key gets 422',
  newRows: 'HTTP {status}, {rows} new ledger row(s)',
  refusalNoMoney: '{what}: the refusal moved no money',
  originalAfter: 'the original body after the {status}',
  seenReplays: '{first} and {count} replay(s)',
  seenRetries: '{first} and {count} retry(ies)',
  thenJoin: '{list}, then {item}',
  notQ: '{status} (not 422)',
  orJoin: '{list} or {item}',
  changedNote: '{seen}, each followed by a changed body → {refusals} and the original → its first answer again',
  releasedNew: 'after a 503 the key is released, so a changed body is a new request; it got 422, as if the failed body were still bound to the key',
  changedExecutes201: 'HTTP 201: the changed body executes',
  changedAfterRelease: 'after a 503 released the key, the changed body executes',
  changedAfter503: 'the changed body after the 503',
  oneOfChanged: 'one transfer, of the changed amount',
  failedResent: 'the body that failed, resent after the changed body executed under the key',
  refusalMovedNone: 'the refusal moved no money',
})

async function rowsSince(bank: BankClient, before: Ledger) {
  return newRows(before, await bank.ledger())
}

/** A transfer and a deposit of one client, in random order: both routes replay. */
function twoIntents(ctx: CheckContext, a: { accounts: string[] }, b: { accounts: string[] }) {
  return ctx.rng.shuffle([
    {
      what: say('aTransfer'),
      path: '/transfers',
      body: { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000), memo: `rent ${ctx.rng.int(1, 12)}` },
    },
    { what: say('aDeposit'), path: '/deposits', body: { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() } },
  ])
}

/** An intent that executed: what it is, its first answer, and `retry`, which resends it and returns the answer. */
type ExecutedIntent = { what: Phrase; first: Reply; retry: (what: Line) => Promise<Reply> }

/**
 * Both intents of twoIntents, each executed once (201) under a fresh key,
 * then handed to `judge`, which retries it as often as it likes and judges
 * the answers. Only the answers: `retry` has the ledger judge first whether
 * the retry executed again, the one verdict every replay check shares.
 */
async function retryEachIntent(ctx: CheckContext, judge: (intent: ExecutedIntent) => Promise<void>) {
  const { bank } = ctx
  const [a, b] = await openParties(ctx, 2)
  const before = await bank.ledger()
  for (const [earlier, intent] of twoIntents(ctx, a, b).entries()) {
    const spec = bank.postSpec(a.customer, intent.path, intent.body, { key: ctx.rng.uuid() })
    const first = await bank.send(spec)
    expectStatus(first, 201, say('executes', { what: intent.what }))
    const retry = async (what: Line) => {
      const reply = await bank.send(spec)
      await expectNotExecutedAgain(bank, before, earlier + 1, reply, what) // a row for each intent executed so far
      return reply
    }
    await judge({ what: intent.what, first, retry })
  }
}

const replayExact: Check = {
  id: 'replay-exact',
  title: 'A completed retry gets the first response back: same status, same bytes, same Content-Type and Location',
  points: 5,
  hint: 'Store status, body and the allow-listed headers (Content-Type, Location) in the transaction that completes the key; on a completed duplicate send exactly those.',
  timeoutMs: 15_000,
  async run(ctx) {
    await retryEachIntent(ctx, async (intent) => {
      const retries = ctx.rng.int(1, 3)
      for (let n = 1; n <= retries; n++) {
        const what = say('retryNOf', { n, what: intent.what })
        expectReplayOf(intent.first, await intent.retry(what), what)
      }
    })
  },
}

const replayMarked: Check = {
  id: 'replay-marked',
  title: 'A replay carries Idempotent-Replayed: true',
  points: 2,
  hint: 'Add Idempotent-Replayed: true where you send a stored response (replay()), after reading it from the key table.',
  timeoutMs: 15_000,
  async run(ctx) {
    await retryEachIntent(ctx, async (intent) => {
      const what = say('theRetryOf', { what: intent.what })
      expectMarked(await intent.retry(what), what)
    })
  },
}

const replayNotRecomputed: Check = {
  id: 'replay-not-recomputed',
  title: 'A replay after the balance changed still shows the original balanceAfter and createdAt',
  points: 6,
  hint: 'Do not rebuild the answer from the database as it is now: send the bytes stored when the key completed.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const [from, other] = a.accounts as [string, string]
    const body = { from, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 20_000) }
    const key = ctx.rng.uuid()
    const first = await bank.transfer(a.customer, body, { key })
    expectStatus(first, 201, say('transferExecutes'))
    // Life goes on: more transfers out of the same account, each its own intent.
    const later = ctx.rng.int(1, 3)
    for (let i = 0; i < later; i++) {
      const r = await bank.transfer(a.customer, { from, to: other, amount: ctx.rng.amount(1_000, 20_000) }, { key: freshKey(ctx) })
      expectStatus(r, 201, say('laterExecutes'))
    }
    const now = await bank.balance(from)
    if (now === first.json.balanceAfter) fail(say('setupBalance'))
    const replay = await bank.transfer(a.customer, body, { key })
    if (replay.json?.balanceAfter === now && now !== first.json.balanceAfter)
      fail(say('recomputed'), {
        exchange: replay.exchange,
        expected: say('balanceAfter', { balance: first.json.balanceAfter, createdAt: first.json.createdAt }),
        got: say('balanceAfter', { balance: replay.json.balanceAfter, createdAt: replay.json.createdAt }),
      })
    expectOutcomeReplayed(first, replay, say('retryAfterOthers', { count: later }), ctx.note)
    ctx.note(say('balanceNote', { from: `₩${first.json.balanceAfter}`, now: `₩${now}`, said: `₩${replay.json.balanceAfter}` }))
  },
}

const replayStored402: Check = {
  id: 'replay-stored-402',
  title: 'A stored 402 is replayed as 402, even after the account was topped up',
  points: 5,
  hint: 'Executing decided the 402: store it with the key like a 201. Trying again after a top-up is a new intent, with a new key.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const from = a.accounts[0]!
    const opened = await bank.balance(from)
    const body = { from, to: ctx.rng.pick(b.accounts), amount: opened + ctx.rng.amount(1_000, 100_000) }
    const key = ctx.rng.uuid()
    const before = await bank.ledger()
    const refused = await bank.transfer(a.customer, body, { key })
    expectProblem(refused, 402, say('overdraftRefused'))
    const topUp = body.amount + ctx.rng.amount()
    expectStatus(await bank.deposit(a.customer, { to: from, amount: topUp }, { key: freshKey(ctx) }), 201, say('topUpExecutes'))
    const retry = await bank.transfer(a.customer, body, { key })
    const moved = (await rowsSince(bank, before)).filter((e) => e.kind === 'transfer')
    if (moved.length > 0)
      fail(say('refusedExecutedAgain'), {
        exchange: retry.exchange,
        expected: say('stored402'),
        got: say('transfersInLedger', { status: retry.status, count: moved.length }),
      })
    expectOutcomeReplayed(refused, retry, say('refusedAfterTopUp'), ctx.note)
    expectEqual(await bank.balance(from), opened + topUp, say('openingPlusTopUp'))
  },
}

const replayBurst: Check = {
  id: 'replay-burst',
  title: 'Many simultaneous retries after completion all get the same bytes',
  points: 5,
  hint: 'Every completed duplicate reads the stored response; none may execute, wait forever, or get a different answer.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const body = { from: ctx.rng.pick(a.accounts), to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    const before = await bank.ledger()
    const first = await bank.transfer(a.customer, body, { key })
    expectStatus(first, 201, say('transferExecutes'))
    const copies = ctx.rng.int(6, 12)
    const replies = await bank.burst(Array.from({ length: copies }, () => bank.postSpec(a.customer, '/transfers', body, { key })))
    await expectNotExecutedAgain(bank, before, 1, replies[0]!, say('oneOfSimultaneous', { copies }))
    replies.forEach((r, i) => expectStoredOutcome(first, r, say('simultaneousN', { i: i + 1, copies })))
    const deviations = replayDeviations(first, replies[0]!)
    if (deviations.length) ctx.note(say('replaysLacked', { deviations: listOf(deviations) }))
    ctx.note(say('simultaneousNote', { copies }))
  },
}

const firstUnmarked: Check = {
  id: 'first-response-unmarked',
  title: 'A first response (201, 402, 403, 404) does not carry Idempotent-Replayed',
  points: 3,
  hint: 'Add the marker where you replay a stored response, never to what a request that executed answers (and do not store it with the response).',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const from = a.accounts[0]!
    const to = ctx.rng.pick(b.accounts)
    const cases: Array<[Phrase, Customer, object, number]> = ctx.rng.shuffle([
      [say('transferExecutes201'), a.customer, { from, to, amount: ctx.rng.amount(1_000, 50_000) }, 201],
      [say('beyondBalance'), a.customer, { from, to, amount: 10_000_000 + ctx.rng.amount() }, 402],
      [say('fromOthers'), b.customer, { from, to, amount: ctx.rng.amount() }, 403],
      [say('toUnknown'), a.customer, { from, to: `acc_missing_${ctx.rng.int(1, 1e6)}`, amount: ctx.rng.amount() }, 404],
    ])
    for (const [what, customer, body, status] of cases) {
      const spec = bank.postSpec(customer, '/transfers', body, { key: ctx.rng.uuid() })
      const first = await bank.send(spec)
      expectStatus(first, status, what)
      expectFirstAnswer(first, what)
    }
  },
}

/** Sends `body` with `key` once while the core simulator fails its next call: the 503 to be released. */
async function failOnce(bank: BankClient, customer: Customer, body: TransferBody, key: string): Promise<Reply> {
  await bank.core({ failNext: 1 })
  try {
    const failed = await bank.transfer(customer, body, { key })
    expectProblem(failed, 503, say('core503'))
    return failed
  } finally {
    await bank.core({ failNext: 0 })
  }
}

const failuresNotStored: Check = {
  id: 'failures-not-stored',
  title: 'A 5xx is not stored: the retry executes, and that result is what replays',
  points: 4,
  hint: 'When the core fails nothing moved: release the key instead of completing it, so the next retry executes and its result is the one stored.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const body = { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    const before = await bank.ledger()
    const failed = await failOnce(bank, a.customer, body, key)
    const executed = await bank.transfer(a.customer, body, { key })
    if (executed.status === 503 && executed.text === failed.text)
      fail(courseRule('failuresNotStored', say('again503')), {
        exchange: executed.exchange,
        expected: say('retryExecutes201'),
        got: isReplay(executed) ? say('replayedSuffix') : 'HTTP 503',
      })
    expectStatus(executed, 201, courseRule('failuresNotStored', say('after503Executes')))
    expectEqual((await rowsSince(bank, before)).length, 1, say('movedOnce'), executed.exchange)
    // What is stored now is the 201, not the 503.
    const next = await bank.transfer(a.customer, body, { key })
    await expectNotExecutedAgain(bank, before, 1, next, say('nextRetry'))
    expectOutcomeReplayed(executed, next, say('nextRetry'), ctx.note)
  },
}

/**
 * Whether the retries of `first` showed it stored with its key: its bytes
 * again, marked as a replay. A 201's bytes again with no new ledger row show
 * it unmarked too (it did not execute twice); a refusal moves no money,
 * decided again or not, so only the marker tells its replay from a refusal
 * decided anew.
 */
const shownStored = (first: Reply, retries: Reply[]) => first.status === 201 || retries.some(isReplay)

/** `items` joined by template `key` ({list} … {item}), as each language joins them. */
const joined = (items: Line[], key: 'thenJoin' | 'orJoin'): Line => items.reduce<Line>((list, item, i) => (i === 0 ? item : say(key, { list, item })), '')

/** A first answer as the evidence allows: "completed" only once its retries showed it stored. */
const firstAnswer = (first: Reply, stored: boolean) => say(stored ? 'completed' : 'answered', { status: first.status })

const changedBodyAfterReplay: Check = {
  id: 'changed-body-after-replay',
  title: 'After replays of a completed key (201 or 402), a changed body gets 422, not the stored response',
  points: 4,
  hint: 'Compare the fingerprint before anything else, completed keys included: a stored response answers only the body that produced it.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const from = a.accounts[0]!
    const opened = await bank.balance(from)
    // A 201 and a stored 402, each under its own key: both answer their own body
    // only (a store that answers a stored error before comparing fails the 402 alone).
    const seen: Phrase[] = []
    const refusedWith = new Set<number>()
    for (const refused of [false, true]) {
      const body: TransferBody = {
        from,
        to: ctx.rng.pick(b.accounts),
        amount: refused ? opened + ctx.rng.amount(1_000, 100_000) : ctx.rng.amount(1_000, 40_000),
      }
      const changed: TransferBody = { ...body, amount: ctx.rng.amount(1_000, 40_000) + (refused ? 0 : 50_000) }
      const key = ctx.rng.uuid()
      const before = await bank.ledger()
      const first = await bank.transfer(a.customer, body, { key })
      expectStatus(first, refused ? 402 : 201, say(refused ? 'overdraftRefused' : 'transferExecutes'))
      const rows = refused ? 0 : 1
      const replays = ctx.rng.int(1, 3)
      const retries: Reply[] = []
      for (let n = 1; n <= replays; n++) {
        const retry = await bank.transfer(a.customer, body, { key })
        await expectNotExecutedAgain(bank, before, rows, retry, say('retryN', { n }))
        expectOutcomeReplayed(first, retry, say('retryN', { n }), ctx.note)
        retries.push(retry)
      }
      const stored = shownStored(first, retries)
      const what = say('insteadUnder', {
        amount: `₩${changed.amount.toLocaleString('en')}`,
        original: `₩${body.amount.toLocaleString('en')}`,
        first: firstAnswer(first, stored),
      })
      const reply = await bank.transfer(a.customer, changed, { key })
      if (reply.status === first.status && reply.text === first.text)
        fail(say(stored ? 'gotStored' : 'gotAgain', { what }), {
          exchange: reply.exchange,
          expected: 'HTTP 422 /problems/idempotency-key-reused',
          got: isReplay(reply)
            ? say('replayed', { got: say(stored ? 'storedResponse' : 'firstBytes', { status: first.status }) })
            : say(stored ? 'storedResponse' : 'firstBytes', { status: first.status }),
        })
      const moved = (await rowsSince(bank, before)).length
      // Executed under a key whose first answer nothing showed stored: that missing store is the cause to name.
      if (!stored && moved > rows)
        fail(say('changedExecuted', { what, status: first.status, replays }), {
          exchange: reply.exchange,
          expected: 'HTTP 422 /problems/idempotency-key-reused',
          got: say('newRows', { status: reply.status, rows: moved - rows }),
        })
      expectChangedBodyRefused(reply, what, ctx.note)
      refusedWith.add(reply.status)
      expectEqual(moved, rows, say('refusalNoMoney', { what }), reply.exchange)
      // The key still stands for the first body.
      const again = await bank.transfer(a.customer, body, { key })
      await expectNotExecutedAgain(bank, before, rows, again, say('originalAfter', { status: reply.status }))
      expectOutcomeReplayed(first, again, say('originalAfter', { status: reply.status }), ctx.note)
      seen.push(say(stored ? 'seenReplays' : 'seenRetries', { first: firstAnswer(first, stored), count: replays }))
    }
    // A changed body refused with another 4xx passed above, with a note: the summary names what it got.
    const refusals = joined(
      [...refusedWith].map((status) => (status === 422 ? '422' : say('notQ', { status }))),
      'orJoin',
    )
    ctx.note(say('changedNote', { seen: joined(seen, 'thenJoin'), refusals }))
  },
}

const changedBodyAfterFailure: Check = {
  id: 'changed-body-after-failure',
  title: 'After a 503 released the key, a changed body executes as a new request, and the key then stands for it',
  points: 4,
  hint: 'Release a failed claim by deleting it (its fingerprint with it), not by expiring its lease: the next request with the key, whatever its body, is the first one.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const body: TransferBody = { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 40_000) }
    // The client fixes the amount before trying again: a released key has no body yet.
    const changed: TransferBody = { ...body, amount: body.amount + ctx.rng.amount(1_000, 40_000) }
    const key = ctx.rng.uuid()
    const before = await bank.ledger()
    await failOnce(bank, a.customer, body, key)
    const executed = await bank.transfer(a.customer, changed, { key })
    if (executed.status === 422)
      fail(courseRule('failuresNotStored', say('releasedNew')), {
        exchange: executed.exchange,
        expected: say('changedExecutes201'),
        got: 'HTTP 422',
      })
    expectStatus(executed, 201, say('changedAfterRelease'))
    expectFirstAnswer(executed, say('changedAfter503'))
    const rows = newRows(before, await bank.ledger())
    expectEqual(
      rows.map((r) => r.amount),
      [changed.amount],
      say('oneOfChanged'),
      executed.exchange,
    )
    // Now the key is bound to the changed body: the failed body is the different one.
    const original = await bank.transfer(a!.customer, body, { key })
    expectChangedBodyRefused(original, say('failedResent'), ctx.note)
    expectEqual((await rowsSince(bank, before)).length, 1, say('refusalMovedNone'), original.exchange)
  },
}

export const stage4: Check[] = [
  replayExact,
  replayMarked,
  replayNotRecomputed,
  replayStored402,
  replayBurst,
  firstUnmarked,
  failuresNotStored,
  changedBodyAfterReplay,
  changedBodyAfterFailure,
]
