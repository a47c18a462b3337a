// Stage 4: a completed duplicate gets the first response back, exactly: same
// status, same body bytes, same Content-Type and Location, plus
// `Idempotent-Replayed: true`. Never recomputed, never marked on a first answer.
import type { BankClient, Customer, Ledger } from '../bankClient.ts'
import { expectEqual, expectProblem, expectStatus, fail, type Check } from '../check.ts'
import type { Reply } from '../http.ts'
import { freshKey, newRows, openParties } from './fixtures.ts'
import { expectFirstAnswer, expectReplayOf } from './replies.ts'

async function rowsSince(bank: BankClient, before: Ledger) {
  return newRows(before, await bank.ledger())
}

const replayExact: Check = {
  id: 'replay-exact',
  title: 'A completed retry gets the first response back: same status, same bytes, same headers, marked replayed',
  points: 7,
  hint: 'Store status, body and the allow-listed headers (Content-Type, Location) in the transaction that completes the key; on a completed duplicate send exactly those, plus Idempotent-Replayed: true.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const before = await bank.ledger()
    // A transfer and a deposit, in random order: both routes replay.
    const intents = ctx.rng.shuffle([
      { what: 'a transfer', path: '/transfers', body: { from: a!.accounts[0]!, to: ctx.rng.pick(b!.accounts), amount: ctx.rng.amount(1_000, 90_000), memo: `rent ${ctx.rng.int(1, 12)}` } },
      { what: 'a deposit', path: '/deposits', body: { to: ctx.rng.pick(a!.accounts), amount: ctx.rng.amount() } },
    ])
    for (const intent of intents) {
      const spec = bank.postSpec(a!.customer, intent.path, intent.body, { key: ctx.rng.uuid() })
      const first = await bank.send(spec)
      expectStatus(first, 201, `${intent.what} executes`)
      const retries = ctx.rng.int(1, 3)
      for (let retry = 1; retry <= retries; retry++) expectReplayOf(first, await bank.send(spec), `retry ${retry} of ${intent.what}`)
    }
    expectEqual((await rowsSince(bank, before)).length, 2, 'the retries moved no money: one ledger row per intent')
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
    const [from, other] = a!.accounts as [string, string]
    const body = { from, to: ctx.rng.pick(b!.accounts), amount: ctx.rng.amount(1_000, 20_000) }
    const key = ctx.rng.uuid()
    const first = await bank.transfer(a!.customer, body, { key })
    expectStatus(first, 201, 'the transfer executes')
    // Life goes on: more transfers out of the same account, each its own intent.
    const later = ctx.rng.int(1, 3)
    for (let i = 0; i < later; i++) {
      const r = await bank.transfer(a!.customer, { from, to: other, amount: ctx.rng.amount(1_000, 20_000) }, { key: freshKey(ctx) })
      expectStatus(r, 201, 'a later, unrelated transfer executes')
    }
    const now = await bank.balance(from)
    if (now === first.json.balanceAfter) fail('setup: the balance did not change')
    const replay = await bank.transfer(a!.customer, body, { key })
    if (replay.json?.balanceAfter === now && now !== first.json.balanceAfter)
      fail('the replay shows the balance as it is now, not as the transfer left it: it was recomputed, not replayed', {
        exchange: replay.exchange,
        expected: `balanceAfter ${first.json.balanceAfter}, createdAt ${first.json.createdAt}`,
        got: `balanceAfter ${replay.json.balanceAfter}, createdAt ${replay.json.createdAt}`,
      })
    expectReplayOf(first, replay, `the retry after ${later} other transfer(s)`)
    ctx.note(`balance moved from ₩${first.json.balanceAfter} to ₩${now}; the replay still says ₩${replay.json.balanceAfter}`)
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
    const from = a!.accounts[0]!
    const opened = await bank.balance(from)
    const body = { from, to: ctx.rng.pick(b!.accounts), amount: opened + ctx.rng.amount(1_000, 100_000) }
    const key = ctx.rng.uuid()
    const before = await bank.ledger()
    const refused = await bank.transfer(a!.customer, body, { key })
    expectProblem(refused, 402, 'a transfer larger than the balance is refused')
    const topUp = body.amount + ctx.rng.amount()
    expectStatus(await bank.deposit(a!.customer, { to: from, amount: topUp }, { key: freshKey(ctx) }), 201, 'the top-up deposit executes')
    const retry = await bank.transfer(a!.customer, body, { key })
    expectReplayOf(refused, retry, 'the retry of the refused transfer, after the top-up')
    const moved = (await rowsSince(bank, before)).filter((e) => e.kind === 'transfer')
    expectEqual(moved.length, 0, 'the replayed 402 moved no money', retry.exchange)
    expectEqual(await bank.balance(from), opened + topUp, 'the balance is the opening plus the top-up')
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
    const body = { from: ctx.rng.pick(a!.accounts), to: ctx.rng.pick(b!.accounts), amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    const before = await bank.ledger()
    const first = await bank.transfer(a!.customer, body, { key })
    expectStatus(first, 201, 'the transfer executes')
    const copies = ctx.rng.int(6, 12)
    const replies = await bank.burst(Array.from({ length: copies }, () => bank.postSpec(a!.customer, '/transfers', body, { key })))
    replies.forEach((r, i) => expectReplayOf(first, r, `simultaneous retry ${i + 1} of ${copies}`))
    expectEqual((await rowsSince(bank, before)).length, 1, `${copies} simultaneous retries moved no money`)
    ctx.note(`${copies} retries at the same instant: ${copies} identical replays`)
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
    const from = a!.accounts[0]!
    const to = ctx.rng.pick(b!.accounts)
    const cases: Array<[string, Customer, object, number]> = ctx.rng.shuffle([
      ['a transfer that executes', a!.customer, { from, to, amount: ctx.rng.amount(1_000, 50_000) }, 201],
      ['a transfer beyond the balance', a!.customer, { from, to, amount: 10_000_000 + ctx.rng.amount() }, 402],
      ["a transfer from another client's account", b!.customer, { from, to, amount: ctx.rng.amount() }, 403],
      ['a transfer to an unknown account', a!.customer, { from, to: `acc_missing_${ctx.rng.int(1, 1e6)}`, amount: ctx.rng.amount() }, 404],
    ])
    for (const [what, customer, body, status] of cases) {
      const spec = bank.postSpec(customer, '/transfers', body, { key: ctx.rng.uuid() })
      const first = await bank.send(spec)
      expectStatus(first, status, what)
      expectFirstAnswer(first, what)
      // Stored without the marker: the replay adds it, once.
      expectReplayOf(first, await bank.send(spec), `the retry of ${what}`)
    }
  },
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
    const body = { from: a!.accounts[0]!, to: ctx.rng.pick(b!.accounts), amount: ctx.rng.amount(1_000, 90_000) }
    const key = ctx.rng.uuid()
    const before = await bank.ledger()
    let executed: Reply
    await bank.core({ failNext: 1 })
    try {
      const failed = await bank.transfer(a!.customer, body, { key })
      expectProblem(failed, 503, 'the core simulator was told to fail this call: the bank answers 503')
      expectFirstAnswer(failed, 'the 503')
      executed = await bank.transfer(a!.customer, body, { key })
    } finally {
      await bank.core({ failNext: 0 })
    }
    expectStatus(executed, 201, 'after a 503 the retry executes (a 5xx is not stored)')
    expectFirstAnswer(executed, 'the retry after the 503')
    expectReplayOf(executed, await bank.transfer(a!.customer, body, { key }), 'the next retry')
    expectEqual((await rowsSince(bank, before)).length, 1, 'one ledger row for the intent')
  },
}

export const stage4: Check[] = [replayExact, replayNotRecomputed, replayStored402, replayBurst, firstUnmarked, failuresNotStored]
