// Setup and ledger assertions shared by the checks of every stage.
import { type Line, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import type { BankClient, Customer, Ledger } from '#harness/bankClient.ts'
import type { Reply } from '#harness/http.ts'
import { expectEqual, expectProblem, fail, type CheckContext } from '../engine/check.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": setup.<key>).
const say = phrases('setup', {
  negativeBalance: 'account {account} has a negative balance',
  moneyCreated: 'money was created or destroyed: balances no longer add up to openings plus deposits',
  balanceVsRows: "account {account}'s balance does not match its ledger rows",
  executedAgain: '{what} executed again: the ledger holds {now} new rows where {rows} belong',
  rowsExpected: '{rows} ledger row(s): a retry is answered from the stored response',
  rowsGot: '{now} ledger rows; the retry answered HTTP {status}',
  otherRefusal: 'a changed body was refused with HTTP {status}, not 422 (see amended-amount)',
})

export type Party = { customer: Customer; accounts: string[] }

/** `N` parties as a tuple, so that `const [a, b] = await openParties(ctx, 2)` needs no `!`. */
export type Parties<N extends number, T extends Party[] = []> = T['length'] extends N ? T : Parties<N, [...T, Party]>

/**
 * The least any account of openParties opens with. A check that sends n
 * transfers from one account keeps each at most SMALLEST_OPENING / n, so that a
 * correct bank never refuses one of them for funds, whatever the seed; the
 * floor is high enough that ten of plan()'s transfers always fit.
 */
export const SMALLEST_OPENING = 1_000_000
const LARGEST_OPENING = 2_000_000

/** Customers with accounts and random opening balances, drawn from the check's RNG. */
export async function openParties<N extends number>(ctx: CheckContext, count: N, accountsEach = 2, bank: BankClient = ctx.bank): Promise<Parties<N>> {
  const parties: Party[] = []
  for (let i = 0; i < count; i++) {
    const customer = await bank.newCustomer(`customer-${ctx.rng.int(1000, 9999)}`)
    const accounts: string[] = []
    for (let j = 0; j < accountsEach; j++) accounts.push(await bank.openAccount(customer, ctx.rng.amount(SMALLEST_OPENING, LARGEST_OPENING)))
    parties.push({ customer, accounts })
  }
  return parties as Parties<N>
}

/** Success of any kind: an execution (201) or an answer that it was done (200, a replay). */
export const is2xx = (r: Reply) => r.status >= 200 && r.status < 300

/** A fresh key for requests whose idempotency is not what the check is about. */
export const freshKey = (ctx: CheckContext) => ctx.rng.uuid()

/** A sum of balances or amounts, exact however large (each is below 2^53, their sum need not be). */
const total = (values: number[]) => values.reduce((s, v) => s + BigInt(v), 0n).toString()

/** Money is conserved and no balance is negative, across the whole bank. */
export function expectConsistent(ledger: Ledger): void {
  const negative = ledger.accounts.find((a) => a.balance < 0)
  if (negative) fail(say('negativeBalance', { account: negative.id }), { got: String(negative.balance) })
  const opened = ledger.accounts.map((a) => a.openedWith)
  const deposited = ledger.entries.filter((e) => e.kind === 'deposit').map((e) => e.amount)
  const held = total(ledger.accounts.map((a) => a.balance))
  expectEqual(held, total([...opened, ...deposited]), say('moneyCreated'))
  // Every balance must equal its opening plus its ledger movements.
  const expected = new Map(ledger.accounts.map((a) => [a.id, a.openedWith]))
  for (const e of ledger.entries) {
    if (e.from) expected.set(e.from, (expected.get(e.from) ?? 0) - e.amount)
    expected.set(e.to, (expected.get(e.to) ?? 0) + e.amount)
  }
  for (const a of ledger.accounts) expectEqual(a.balance, expected.get(a.id), say('balanceVsRows', { account: a.id }))
}

/** Ledger rows that moved money between these two accounts. */
export function rowsBetween(ledger: Ledger, from: string, to: string) {
  return ledger.entries.filter((e) => e.from === from && e.to === to)
}

/**
 * A retry did not execute again: the ledger, not the answer, is the judge, so
 * a re-executed retry is reported as that, whatever it answered.
 */
export async function expectNotExecutedAgain(bank: BankClient, before: Ledger, rows: number, retry: Reply, what: Line): Promise<void> {
  const now = newRows(before, await bank.ledger()).length
  if (now > rows)
    fail(say('executedAgain', { what, now, rows }), {
      exchange: retry.exchange,
      expected: say('rowsExpected', { rows }),
      got: say('rowsGot', { now, status: retry.status }),
    })
}

/** The ledger rows a check caused: those that were not there before. */
export function newRows(before: Ledger, after: Ledger) {
  const seen = new Set(before.entries.map((e) => e.id))
  return after.entries.filter((e) => !seen.has(e.id))
}

/**
 * A changed body under a used key is refused. Which status says so is
 * amended-amount's property (422, stage 2): a check about something else (the
 * body's other fields, the moment: in flight, after a lease) notes another 4xx
 * instead of failing on it, so one deviation fails one check. Anything else
 * (a 2xx, a 5xx, a 409 that claims the first body is still in flight) fails here.
 */
export function expectChangedBodyRefused(reply: Reply, why: Phrase, note: (line: Line) => void): void {
  if (reply.status >= 400 && reply.status < 500 && reply.status !== 422 && reply.status !== 409) note(say('otherRefusal', { status: reply.status }))
  else expectProblem(reply, 422, why)
}

/** The bank's defaults (CONTRACT.md, Configuration), which the shared server runs with. */
export const DEFAULT_LEASE_MS = 30_000
export const DEFAULT_KEY_TTL_MS = 86_400_000

/**
 * A server whose lease and TTL the check knows. On a controlled clock it is
 * the shared server with the defaults (a 30 s lease, a 24 h TTL): moving the
 * clock a day costs nothing, and the defaults are what a learner ships. On a
 * real clock it is an instance of its own with the `short` values, so that
 * the check waits seconds, not a day.
 */
export async function periodBank(ctx: CheckContext, short: { leaseMs?: number; ttlMs?: number }) {
  if (ctx.clock.controlled) return { bank: ctx.bank, leaseMs: DEFAULT_LEASE_MS, ttlMs: DEFAULT_KEY_TTL_MS }
  const bank = await ctx.startServer({ settings: { leaseMs: short.leaseMs, keyTtlMs: short.ttlMs } })
  return { bank, leaseMs: short.leaseMs ?? DEFAULT_LEASE_MS, ttlMs: short.ttlMs ?? DEFAULT_KEY_TTL_MS }
}
