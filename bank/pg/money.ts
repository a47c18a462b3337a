// The money on PostgreSQL: money.ts's rules, run inside a transaction the
// caller opened. READ COMMITTED lets two transfers read the same balance, so
// the rows are locked first (FOR UPDATE, in id order so that two transfers
// between the same accounts never deadlock); the checks then see the truth.
import { randomUUID } from 'node:crypto'
import type { DepositRequest, TransferRequest } from '../money.ts'
import { jsonOutcome, problem, type Outcome } from '../problem.ts'
import type { Tx } from './db.ts'

type AccountRow = { id: string; clientId: string; balance: number }

const unknownAccount = (id: string): Outcome => problem(404, 'account-not-found', 'Account not found', `There is no account ${id}.`)
const notOwner = (id: string): Outcome => problem(403, 'not-account-owner', 'Not your account', `Account ${id} belongs to another client.`)

async function lockAccounts(tx: Tx, ids: string[]): Promise<Map<string, AccountRow>> {
  const { rows } = await tx.query<AccountRow>('SELECT id, client_id AS "clientId", balance FROM accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE', [ids])
  return new Map(rows.map((r) => [r.id, r]))
}

async function record(tx: Tx, kind: 'transfer' | 'deposit', clientId: string, from: string | null, to: string, amount: number) {
  const id = `${kind === 'transfer' ? 'tr' : 'dp'}_${randomUUID()}`
  const { rows } = await tx.query<{ createdAt: Date }>(
    `INSERT INTO ledger (id, kind, client_id, from_account, to_account, amount) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING created_at AS "createdAt"`,
    [id, kind, clientId, from, to, amount],
  )
  return { id, createdAt: rows[0]!.createdAt.toISOString() }
}

const addToBalance = (tx: Tx, id: string, amount: number) => tx.query('UPDATE accounts SET balance = balance + $1 WHERE id = $2', [amount, id])

export async function transfer(tx: Tx, clientId: string, { from, to, amount }: TransferRequest): Promise<Outcome> {
  const accounts = await lockAccounts(tx, [from, to])
  const source = accounts.get(from)
  if (!source) return unknownAccount(from)
  if (source.clientId !== clientId) return notOwner(from)
  if (!accounts.has(to)) return unknownAccount(to)
  if (source.balance < amount)
    return problem(402, 'insufficient-funds', 'Insufficient funds', `Account ${from} cannot cover ${amount} won.`, {
      members: { balance: source.balance, amount },
    })
  await addToBalance(tx, from, -amount)
  await addToBalance(tx, to, amount)
  const { id, createdAt } = await record(tx, 'transfer', clientId, from, to, amount)
  return jsonOutcome(201, { id, from, to, amount, createdAt, balanceAfter: source.balance - amount }, { Location: `/transfers/${id}` })
}

export async function deposit(tx: Tx, clientId: string, { to, amount }: DepositRequest): Promise<Outcome> {
  const target = (await lockAccounts(tx, [to])).get(to)
  if (!target) return unknownAccount(to)
  if (target.clientId !== clientId) return notOwner(to)
  await addToBalance(tx, to, amount)
  const { id, createdAt } = await record(tx, 'deposit', clientId, null, to, amount)
  return jsonOutcome(201, { id, to, amount, createdAt, balanceAfter: target.balance + amount }, { Location: `/deposits/${id}` })
}
