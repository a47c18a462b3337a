// The money itself, the same on both stores: which accounts a movement reads,
// whether it may happen, what it writes and what it answers. A store
// (store.ts) reads the accounts inside its transaction, asks decide(), and
// applies the plan in that same transaction, so the checks and the writes see
// one consistent state; only the SQL is the store's.
import { randomUUID } from 'node:crypto'
import { jsonOutcome, problem, type Outcome } from './problem.ts'

export type Move = { kind: 'transfer'; from: string; to: string; amount: number } | { kind: 'deposit'; to: string; amount: number }

export type AccountRow = { id: string; clientId: string; balance: number }

/** One ledger row: what a duplicate transfer looks like is two of these for one intent. */
export type Entry = { id: string; kind: Move['kind']; clientId: string; from: string | null; to: string; amount: number }

/** What an allowed movement writes: each balance change, then its ledger row. */
export type Plan = { changes: Array<[accountId: string, delta: number]>; entry: Entry; balanceAfter: number }

/** The accounts a movement reads (and, on PostgreSQL, locks) before decide(). */
export const accountsOf = (move: Move): string[] => (move.kind === 'transfer' ? [move.from, move.to] : [move.to])

/**
 * The largest balance the bank holds: 2^53 − 1 won, the largest integer a
 * JSON number (a JavaScript number) carries exactly. SQLite's INTEGER and
 * PostgreSQL's BIGINT could hold more, but no answer could say it exactly,
 * so a movement that would take a balance past it is refused and moves
 * nothing. Amounts are at most 10^12 (schemas.ts): far below it.
 */
export const MAX_BALANCE = Number.MAX_SAFE_INTEGER

/** A balance that `amount` more would take past MAX_BALANCE (compared without adding, so exactly). */
const wouldOverflow = (balance: number, amount: number) => balance > MAX_BALANCE - amount

const balanceLimit = (id: string, balance: number, amount: number): Outcome =>
  problem(
    422,
    'balance-limit',
    'Balance limit',
    `Account ${id} holds ${balance} won: ${amount} more would pass ${MAX_BALANCE}, the most the bank holds exactly.`,
    {
      members: { balance, amount, maxBalance: MAX_BALANCE },
    },
  )

/** Also GET /accounts/{id}'s answers (app.ts): one wording for an account, however it is reached. */
export const unknownAccount = (id: string): Outcome => problem(404, 'account-not-found', 'Account not found', `There is no account ${id}.`)
export const notOwner = (id: string): Outcome => problem(403, 'not-account-owner', 'Not your account', `Account ${id} belongs to another client.`)

/** A refusal (a problem that moves nothing) or the plan to apply; `accounts` holds those of accountsOf(move) that exist. */
export function decide(clientId: string, move: Move, accounts: ReadonlyMap<string, AccountRow>): { refused: Outcome } | { plan: Plan } {
  if (move.kind === 'deposit') {
    const { to, amount } = move
    const target = accounts.get(to)
    if (!target) return { refused: unknownAccount(to) }
    if (target.clientId !== clientId) return { refused: notOwner(to) }
    if (wouldOverflow(target.balance, amount)) return { refused: balanceLimit(to, target.balance, amount) }
    const entry: Entry = { id: `dp_${randomUUID()}`, kind: 'deposit', clientId, from: null, to, amount }
    return { plan: { changes: [[to, amount]], entry, balanceAfter: target.balance + amount } }
  }
  const { from, to, amount } = move
  const source = accounts.get(from)
  if (!source) return { refused: unknownAccount(from) }
  if (source.clientId !== clientId) return { refused: notOwner(from) }
  const target = accounts.get(to)
  if (!target) return { refused: unknownAccount(to) }
  if (source.balance < amount)
    return {
      refused: problem(402, 'insufficient-funds', 'Insufficient funds', `Account ${from} cannot cover ${amount} won.`, {
        members: { balance: source.balance, amount },
      }),
    }
  if (wouldOverflow(target.balance, amount)) return { refused: balanceLimit(to, target.balance, amount) }
  const entry: Entry = { id: `tr_${randomUUID()}`, kind: 'transfer', clientId, from, to, amount }
  return {
    plan: {
      changes: [
        [from, -amount],
        [to, amount],
      ],
      entry,
      balanceAfter: source.balance - amount,
    },
  }
}

/**
 * The 201 for an applied plan, `createdAt` as its store recorded it.
 * balanceAfter and createdAt make this body differ if it were computed again
 * later: that is why stage 4 replays the stored bytes instead.
 */
export function moved({ entry, balanceAfter }: Plan, createdAt: string): Outcome {
  const { id, kind, from, to, amount } = entry
  const body = kind === 'transfer' ? { id, from, to, amount, createdAt, balanceAfter } : { id, to, amount, createdAt, balanceAfter }
  return jsonOutcome(201, body, { Location: `/${kind}s/${id}` })
}
