// Stage 0: the bank works, and a retried transfer executes twice.
import { dirname, resolve } from 'node:path'
import pLimit from 'p-limit'
import type { LedgerEntry } from '#harness/bankClient.ts'
import { type Phrase, phrases } from '#harness/i18n/phrase.ts'
import { expectEqual, expectProblem, expectStatus, fail, type Check } from '../engine/check.ts'
import type { CallResult } from '../policing/learnerCode.ts'
import { expectConsistent, freshKey, newRows, openParties } from './setup.ts'
import { copiesToFlag, craftLedger, suspectedCopies } from './suspectedDuplicates.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage0.<key>).
const say = phrases('stage0', {
  healthAnswers: 'GET /health must answer 200',
  accountOpens: 'POST /accounts opens an account',
  ownAccountRead: 'a client reads its own account',
  openingBalanceRead: 'the balance read back is the opening balance',
  overdraftRefused: 'a transfer larger than the balance is refused with 402',
  transferAnswers201: 'a valid transfer answers 201',
  bodyDescribesTransfer: 'the 201 body describes the transfer and the debited balance after it',
  bodyNeedsId: 'the 201 body needs a string id and an ISO createdAt',
  rowPer201: 'one ledger row per 201',
  balanceOf: 'balance of {account}',
  executesOrRefused: 'each transfer either executes (201) or is refused for funds (402)',
  exactlyRowPer201: 'exactly one ledger row per 201 answered',
  idNotInLedger: 'a 201 names a transfer id that is not in the ledger',
  concurrentNote: '{executed} of 40 concurrent transfers executed, {refused} refused for funds; money conserved',
  badCase: '{what}: expected {status}',
  malformedJson: 'malformed JSON',
  amountString: 'amount as a string',
  negativeAmount: 'negative amount',
  zeroAmount: 'zero amount',
  fractionalAmount: 'fractional amount',
  hugeAmount: 'huge amount',
  missingField: 'missing field',
  unknownField: 'unknown field',
  sameAccount: 'same account twice',
  arrayBody: 'an array body',
  hugeBody: 'a 10 MB body',
  formRefused: 'a form-encoded body is refused',
  badMovesNothing: 'no bad request may move money',
  noBalanceChanges: 'no balance may change',
  noAuthorization: 'no Authorization header',
  unknownApiKey: 'an unknown API key',
  debitOthers: "debiting another client's account",
  creditUnknown: 'crediting an account that does not exist',
  readOthers: "reading another client's account",
  refusedMoveNothing: 'refused requests move no money',
  storyNote: '{attempts} attempts of one {amount} transfer, same Idempotency-Key → {rows} ledger row(s)',
  storyExtra: '{note}: the retries moved {extra} extra. Stage 1 fixes this.',
  storyAtStage0: 'at stage 0, {attempts} attempts of a funded transfer are {attempts} answers 201 and {attempts} ledger rows',
  mustExportSql: '{file} must export SUSPECTED_DUPLICATES_SQL, a SQL query',
  queryFailed: 'your query failed: {error}',
  craftedCopies: 'on a crafted ledger, your query must flag exactly the copies',
  liveCopies: 'on the live ledger, your query must flag exactly the copies',
})

const bankBasics: Check = {
  id: 'bank-basics',
  title: 'Clients open accounts and read their balances',
  points: 3,
  hint: 'This is the bank every stage builds on: if it fails, the bank or your layer broke a route it should pass through.',
  timeoutMs: 10_000,
  async run(ctx) {
    const health = await ctx.bank.send({ path: '/health' })
    expectStatus(health, 200, say('healthAnswers'))
    const [alice] = await openParties(ctx, 1, 0)
    const balance = ctx.rng.amount(0, 5_000_000)
    const opened = await ctx.bank.as(alice!.customer, { path: '/accounts', body: { balance } })
    expectStatus(opened, 201, say('accountOpens'))
    const read = await ctx.bank.as(alice!.customer, { path: `/accounts/${opened.json.id}` })
    expectStatus(read, 200, say('ownAccountRead'))
    expectEqual(read.json.balance, balance, say('openingBalanceRead'), read.exchange)
  },
}

const transfersMoveMoney: Check = {
  id: 'transfers-move-money',
  title: 'Transfers answer 201 with the new balance and move exactly the amount',
  points: 5,
  hint: 'A 201 body carries id, from, to, amount, createdAt and balanceAfter; the ledger gets one row per 201.',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const before = await ctx.bank.ledger()
    const balances = new Map(before.accounts.map((acc) => [acc.id, acc.balance]))
    let created = 0
    for (let i = 0; i < 8; i++) {
      const from = ctx.rng.pick(a.accounts)
      const to = ctx.rng.pick([a.accounts.find((x) => x !== from)!, ...b.accounts])
      // Now and then more than the balance, to see a 402 that moves nothing.
      const amount = ctx.rng.chance(0.25) ? balances.get(from)! + ctx.rng.amount() : ctx.rng.amount(1_000, 100_000)
      const reply = await ctx.bank.transfer(a.customer, { from, to, amount }, { key: freshKey(ctx) })
      if (amount > balances.get(from)!) {
        expectProblem(reply, 402, say('overdraftRefused'))
        continue
      }
      expectStatus(reply, 201, say('transferAnswers201'))
      created++
      balances.set(from, balances.get(from)! - amount)
      balances.set(to, balances.get(to)! + amount)
      const body = reply.json
      expectEqual(
        { from: body.from, to: body.to, amount: body.amount, balanceAfter: body.balanceAfter },
        { from, to, amount, balanceAfter: balances.get(from) },
        say('bodyDescribesTransfer'),
        reply.exchange,
      )
      if (typeof body.id !== 'string' || Number.isNaN(Date.parse(body.createdAt))) fail(say('bodyNeedsId'), { exchange: reply.exchange })
    }
    const after = await ctx.bank.ledger()
    expectEqual(newRows(before, after).length, created, say('rowPer201'))
    for (const acc of [...a.accounts, ...b.accounts])
      expectEqual(after.accounts.find((x) => x.id === acc)!.balance, balances.get(acc), say('balanceOf', { account: acc }))
    expectConsistent(after)
  },
}

const concurrentTransfers: Check = {
  id: 'concurrent-transfers',
  title: 'Concurrent transfers keep every balance right and conserve money',
  points: 6,
  hint: 'Debit and credit must commit in one transaction, and the balance check must happen inside it.',
  timeoutMs: 20_000,
  async run(ctx) {
    const parties = await openParties(ctx, 4)
    const before = await ctx.bank.ledger()
    const limit = pLimit(8)
    const plans = Array.from({ length: 40 }, () => {
      const payer = ctx.rng.pick(parties)
      const from = ctx.rng.pick(payer.accounts)
      const to = ctx.rng.pick(parties.flatMap((p) => p.accounts).filter((x) => x !== from))
      return { payer, body: { from, to, amount: ctx.rng.amount(10_000, 900_000) }, key: freshKey(ctx) }
    })
    const replies = await Promise.all(ctx.rng.shuffle(plans).map((p) => limit(() => ctx.bank.transfer(p.payer.customer, p.body, { key: p.key }))))
    for (const r of replies) expectStatus(r, [201, 402], say('executesOrRefused'))
    const after = await ctx.bank.ledger()
    const rows = newRows(before, after)
    const ok = replies.filter((r) => r.status === 201)
    expectEqual(rows.length, ok.length, say('exactlyRowPer201'))
    const ids = new Set(rows.map((r) => r.id))
    const missing = ok.find((r) => !ids.has(r.json.id))
    if (missing) fail(say('idNotInLedger'), { exchange: missing.exchange })
    expectConsistent(after)
    ctx.note(say('concurrentNote', { executed: ok.length, refused: replies.length - ok.length }))
  },
}

const badInput: Check = {
  id: 'bad-input',
  title: 'Bad input gets a 4xx problem+json, never a 500, and moves no money',
  points: 6,
  hint: 'Every error is RFC 9457 application/problem+json; validation happens before anything executes.',
  timeoutMs: 20_000,
  async run(ctx) {
    const [a] = await openParties(ctx, 1)
    const [from, to] = a.accounts as [string, string]
    const before = await ctx.bank.ledger()
    const amount = ctx.rng.amount()
    const cases: Array<[Phrase, string | object, number]> = [
      [say('malformedJson'), `{"from":"${from}","to":"${to}","amount":${amount}`, 400],
      [say('amountString'), { from, to, amount: String(amount) }, 400],
      [say('negativeAmount'), { from, to, amount: -amount }, 400],
      [say('zeroAmount'), { from, to, amount: 0 }, 400],
      [say('fractionalAmount'), { from, to, amount: amount + 0.5 }, 400],
      [say('hugeAmount'), `{"from":"${from}","to":"${to}","amount":1e300}`, 400],
      [say('missingField'), { from, amount }, 400],
      [say('unknownField'), { from, to, amount, currency: 'USD' }, 400],
      [say('sameAccount'), { from, to: from, amount }, 400],
      [say('arrayBody'), [from, to, amount], 400],
      [say('hugeBody'), `{"from":"${from}","to":"${to}","amount":${amount},"memo":"${'x'.repeat(10 * 1024 * 1024)}"}`, 413],
    ]
    for (const [what, body, status] of cases) {
      const reply = await ctx.bank.transfer(a.customer, body as never, {
        key: freshKey(ctx),
        raw: typeof body === 'string' ? body : JSON.stringify(body),
      })
      expectProblem(reply, status, say('badCase', { what, status }))
    }
    const text = await ctx.bank.send({
      method: 'POST',
      path: '/transfers',
      body: `from=${from}&to=${to}&amount=${amount}`,
      headers: { Authorization: `Bearer ${a.customer.apiKey}`, 'Content-Type': 'application/x-www-form-urlencoded', 'Idempotency-Key': freshKey(ctx) },
    })
    expectStatus(text, [400, 415], say('formRefused'))
    const after = await ctx.bank.ledger()
    expectEqual(newRows(before, after).length, 0, say('badMovesNothing'))
    expectEqual(after.accounts.slice(0, before.accounts.length), before.accounts, say('noBalanceChanges'))
  },
}

const authAndOwnership: Check = {
  id: 'auth-and-ownership',
  title: "Missing or wrong API keys get 401, other clients' accounts 403, unknown accounts 404",
  points: 5,
  hint: 'Authentication comes first; a client may credit any account but only debit its own.',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const before = await ctx.bank.ledger()
    const body = { from: a.accounts[0]!, to: b.accounts[0]!, amount: ctx.rng.amount() }
    const spec = ctx.bank.postSpec(a.customer, '/transfers', body, { key: freshKey(ctx) })
    const noAuth = await ctx.bank.send({ ...spec, headers: { 'Idempotency-Key': freshKey(ctx) } })
    expectProblem(noAuth, 401, say('noAuthorization'))
    const badAuth = await ctx.bank.send({ ...spec, headers: { ...spec.headers, Authorization: 'Bearer sk_not_a_key' } })
    expectProblem(badAuth, 401, say('unknownApiKey'))
    const notMine = await ctx.bank.transfer(b.customer, body, { key: freshKey(ctx) })
    expectProblem(notMine, 403, say('debitOthers'))
    const unknown = await ctx.bank.transfer(a.customer, { ...body, to: 'acc_does_not_exist' }, { key: freshKey(ctx) })
    expectProblem(unknown, 404, say('creditUnknown'))
    const peek = await ctx.bank.as(b.customer, { path: `/accounts/${a.accounts[0]}` })
    expectProblem(peek, 403, say('readOthers'))
    const after = await ctx.bank.ledger()
    expectEqual(newRows(before, after).length, 0, say('refusedMoveNothing'))
  },
}

/** How many times the story's client sends its one transfer. */
const ATTEMPTS = 3

const suspectedDuplicates: Check = {
  id: 'suspected-duplicates',
  title: 'A retried transfer executes twice, and your query finds the copies',
  points: 5,
  hint: 'Edit stages/00-unprotected/suspectedDuplicates.ts: flag each later row that repeats an earlier one within 60 s.',
  timeoutMs: 20_000,
  // It runs your query on the server's SQLite file, live ledger and all.
  needs: 'sqlite-file',
  async run(ctx) {
    // The story first: a client that loses the responses sends the same
    // transfer three times. The payer holds enough for every attempt, so what
    // the ledger shows is the server's doing, never a 402 for funds.
    const amount = ctx.rng.amount()
    const payer = await ctx.bank.newCustomer(`customer-${ctx.rng.int(1000, 9999)}`)
    const from = await ctx.bank.openAccount(payer, ATTEMPTS * amount + ctx.rng.amount(0, 100_000))
    const [b] = await openParties(ctx, 1, 1)
    const body = { from, to: b.accounts[0]!, amount }
    const key = ctx.rng.uuid()
    const replies = []
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) replies.push(await ctx.bank.transfer(payer, body, { key }))
    const live = await ctx.bank.ledger()
    const executed = live.entries.filter((e) => e.from === body.from && e.to === body.to).length
    const story = say('storyNote', { attempts: ATTEMPTS, amount: `₩${amount.toLocaleString('en')}`, rows: executed })
    ctx.note(executed > 1 ? say('storyExtra', { note: story, extra: `₩${((executed - 1) * amount).toLocaleString('en')}` }) : story)
    // At stage 0 nothing recognises a retry: every attempt must execute. (At
    // later stages, run as regression, the layer is meant to stop them.)
    // A layer that executed more than asked shows either way: more rows, or a
    // 402 once it spent the money funded for the later attempts.
    if (ctx.gradedStage === 0)
      expectEqual(
        { answered201: replies.filter((r) => r.status === 201).length, ledgerRows: executed },
        { answered201: ATTEMPTS, ledgerRows: ATTEMPTS },
        say('storyAtStage0', { attempts: ATTEMPTS }),
        replies.find((r) => r.status !== 201)?.exchange ?? replies.at(-1)!.exchange,
      )

    const file = resolve(ctx.stageDir(0), 'suspectedDuplicates.ts')
    // The query runs in the child that loads the learner's file, not here: an endless one fails this check, and the grader goes on.
    const crafted = craftLedger(ctx.rng, dirname(ctx.dbPath))
    let answers: CallResult[]
    try {
      answers = await ctx.callExport(file, { kind: 'query', name: 'SUSPECTED_DUPLICATES_SQL', files: [crafted.path, ctx.dbPath] })
    } finally {
      crafted.dispose()
    }
    const [sql, onCrafted, onLive] = answers
    if (!sql?.ok) return fail(say('mustExportSql', { file }))
    const ids = (rows: CallResult | undefined) => {
      if (!rows?.ok) return fail(say('queryFailed', { error: String(rows?.error) }), { got: String(sql.value) })
      return (rows.value as string[]).sort()
    }
    expectEqual(ids(onCrafted), suspectedCopies(crafted.entries), say('craftedCopies'))
    const flagged = ids(onLive)
    const expected = copiesToFlag(live.entries as LedgerEntry[], flagged)
    expectEqual(flagged, expected, say('liveCopies'))
  },
}

export const stage0: Check[] = [bankBasics, transfersMoveMoney, concurrentTransfers, badInput, authAndOwnership, suspectedDuplicates]
