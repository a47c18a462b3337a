// Money is exact to the last won, or refused: no balance passes 2^53 − 1
// (bank/money.ts, MAX_BALANCE), the largest integer a JSON number carries
// exactly. On each store (the stage 0 solution on SQLite, on PostgreSQL):
// - the boundary itself: an account MAX_BALANCE − 10^12 takes a deposit of
//   10^12 (the largest amount) and then refuses one of 1 won, 422
//   /problems/balance-limit, moving nothing;
// - a property (fast-check): for a balance placed near the boundary (set in
//   the database, the white box) and an amount drawn around what is left, a
//   deposit or a transfer into it is taken exactly when the sum fits: its
//   balanceAfter, digit for digit in the answer's bytes, is the exact sum,
//   and the database holds it; one that does not fit is refused with its
//   problem, and no balance and no ledger row changes.
// Seeded: LAB_MONEY_SEED=<n> replays a run, LAB_MONEY_RUNS=<n> sets the cases per store.
import Database from 'better-sqlite3'
import fc from 'fast-check'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MAX_BALANCE } from '#bank/money.ts'
import { MAX_AMOUNT } from '#bank/schemas.ts'
import type { Reply } from '#harness/http.ts'
import { balancesOf, customerWith, expectProblemReply, startBank, type TestBank } from './helpers/bank.ts'
import { sharedPostgres } from './helpers/postgres.ts'
import { scratchDir } from './helpers/scratch.ts'

const SEED = Number(process.env.LAB_MONEY_SEED ?? 20_261_204)
const RUNS = Number(process.env.LAB_MONEY_RUNS ?? 100)
const rerun = `LAB_MONEY_SEED=${SEED} LAB_MONEY_RUNS=${RUNS} npx vitest run test/bank.money.test.ts`
const scratch = scratchDir('money')
const pgServer = sharedPostgres()

/** A bank on one store, and a way to place an account's balance (its opening too, so the ledger still adds up). */
type Store = { name: string; tb: TestBank; place(account: string, balance: number): Promise<void>; stop(): Promise<void> }
const stores: Store[] = []

beforeAll(async () => {
  const sqlite = await startBank(scratch.path)
  const file = sqlite.server.options.dbPath
  stores.push({
    name: 'SQLite',
    tb: sqlite,
    async place(account, balance) {
      const db = new Database(file)
      try {
        db.prepare('UPDATE accounts SET balance = ?, opened_with = ? WHERE id = ?').run(balance, balance, account)
      } finally {
        db.close()
      }
    },
    stop: () => sqlite.server.stop(),
  })
  const url = await pgServer.newDatabase()
  const onPg = await startBank(scratch.path, { env: { LAB_DATABASE_URL: url } })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  stores.push({
    name: 'PostgreSQL',
    tb: onPg,
    // Text, so that the driver writes the value exactly as given.
    place: (account, balance) =>
      client.query('UPDATE accounts SET balance = $1::bigint, opened_with = $1::bigint WHERE id = $2', [String(balance), account]).then(() => undefined),
    stop: async () => {
      await client.end()
      await onPg.server.stop()
    },
  })
}, 120_000)

afterAll(async () => {
  await Promise.allSettled(stores.map((s) => s.stop()))
  scratch.dispose()
})

/** The answer's balanceAfter as written in its bytes: the digits themselves, not a number JSON.parse may have rounded. */
const writtenBalanceAfter = (reply: Reply) => /"balanceAfter":(-?\d+)/.exec(reply.text)?.[1]

describe.each(['SQLite', 'PostgreSQL'])('money at the edge of 2^53, on %s', (name) => {
  const store = () => stores.find((s) => s.name === name)!

  it('the last deposit that fits is taken, exactly; the first that does not is refused and moves nothing', async () => {
    const { bank } = store().tb
    const { customer, accounts } = await customerWith(bank, 1)
    const [account] = accounts as [string]
    await store().place(account, MAX_BALANCE - MAX_AMOUNT)
    const last = await bank.deposit(customer, { to: account, amount: MAX_AMOUNT }, { key: 'last-that-fits' })
    expect(last.status, last.text).toBe(201)
    expect(writtenBalanceAfter(last)).toBe(String(MAX_BALANCE))
    const before = await bank.ledger()
    const first = await bank.deposit(customer, { to: account, amount: 1 }, { key: 'first-that-does-not' })
    expectProblemReply(first, 422, '/problems/balance-limit')
    expect(first.json).toMatchObject({ balance: MAX_BALANCE, amount: 1, maxBalance: MAX_BALANCE })
    const after = await bank.ledger()
    expect(balancesOf(after)).toEqual(balancesOf(before))
    expect(after.entries).toHaveLength(before.entries.length)
    console.log(`${name}: at ${MAX_BALANCE - MAX_AMOUNT}, +${MAX_AMOUNT} → ${last.status} ${last.text}\n${name}: then +1 → ${first.status} ${first.text}`)
  })

  it(`a deposit or a transfer into an account near the edge is taken exactly when it fits, else refused (${RUNS} cases)`, async () => {
    const { bank } = store().tb
    const { customer, accounts } = await customerWith(bank, 1, MAX_AMOUNT)
    const [target, source] = accounts as [string, string]
    let run = 0
    // How much room the account has left, and how the amount stands to it: below, exactly, just above, far above.
    const room = fc.oneof(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: MAX_AMOUNT }))
    const amountFor = (left: number) =>
      fc.oneof(
        fc.constant(Math.min(Math.max(left, 1), MAX_AMOUNT)),
        fc.constant(Math.min(left + 1, MAX_AMOUNT)),
        fc.integer({ min: 1, max: MAX_AMOUNT }),
        fc.integer({ min: 1, max: Math.min(Math.max(left, 1), MAX_AMOUNT) }),
      )
    const cases = room.chain((left) => fc.record({ left: fc.constant(left), amount: amountFor(left), kind: fc.constantFrom('deposit', 'transfer') }))
    await fc
      .assert(
        fc.asyncProperty(cases, async ({ left, amount, kind }) => {
          const start = MAX_BALANCE - left
          await store().place(target, start)
          await store().place(source, MAX_AMOUNT)
          const before = await bank.ledger()
          const key = `money-${++run}`
          const reply =
            kind === 'deposit'
              ? await bank.deposit(customer, { to: target, amount }, { key })
              : await bank.transfer(customer, { from: source, to: target, amount }, { key })
          const after = await bank.ledger()
          const held = after.accounts.find((a) => a.id === target)!.balance
          if (amount <= left) {
            expect(reply.status, reply.text).toBe(201)
            // A deposit answers the target's new balance; a transfer the source's.
            const expected = kind === 'deposit' ? BigInt(start) + BigInt(amount) : BigInt(MAX_AMOUNT) - BigInt(amount)
            expect(writtenBalanceAfter(reply)).toBe(expected.toString())
            expect(BigInt(held)).toBe(BigInt(start) + BigInt(amount))
            expect(after.entries).toHaveLength(before.entries.length + 1)
          } else {
            expectProblemReply(reply, 422, '/problems/balance-limit')
            expect(balancesOf(after)).toEqual(balancesOf(before))
            expect(after.entries).toHaveLength(before.entries.length)
          }
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      )
      .catch((error: Error) => {
        throw new Error(`${error.message}\nreplay: ${rerun}`)
      })
  }, 300_000)
})
