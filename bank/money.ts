// The money itself. These functions run inside a transaction the caller opens,
// so the checks and the writes see one consistent state.
import { randomUUID } from 'node:crypto'
import type { Db } from './db.ts'
import { jsonOutcome, problem, type Outcome } from './problem.ts'

export type TransferRequest = { from: string; to: string; amount: number }
export type DepositRequest = { to: string; amount: number }

type AccountRow = { id: string; clientId: string; balance: number }

export function createMoney(db: Db) {
  const getAccount = db.prepare<[string], AccountRow>('SELECT id, client_id AS clientId, balance FROM accounts WHERE id = ?')
  const addToBalance = db.prepare<[number, string]>('UPDATE accounts SET balance = balance + ? WHERE id = ?')
  const insertEntry = db.prepare<[string, string, string, string | null, string, number, string]>(
    `INSERT INTO ledger (id, kind, client_id, from_account, to_account, amount, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )

  function unknownAccount(id: string): Outcome {
    return problem(404, 'account-not-found', 'Account not found', `There is no account ${id}.`)
  }

  return {
    transfer(clientId: string, { from, to, amount }: TransferRequest): Outcome {
      const source = getAccount.get(from)
      if (!source) return unknownAccount(from)
      if (source.clientId !== clientId) return problem(403, 'not-account-owner', 'Not your account', `Account ${from} belongs to another client.`)
      if (!getAccount.get(to)) return unknownAccount(to)
      if (source.balance < amount)
        return problem(402, 'insufficient-funds', 'Insufficient funds', `Account ${from} cannot cover ${amount} won.`, {
          members: { balance: source.balance, amount },
        })
      const id = `tr_${randomUUID()}`
      const createdAt = new Date().toISOString()
      addToBalance.run(-amount, from)
      addToBalance.run(amount, to)
      insertEntry.run(id, 'transfer', clientId, from, to, amount, createdAt)
      // balanceAfter and createdAt make this body differ if it were computed
      // again later: that is why stage 4 replays the stored bytes instead.
      return jsonOutcome(201, { id, from, to, amount, createdAt, balanceAfter: source.balance - amount }, { Location: `/transfers/${id}` })
    },

    deposit(clientId: string, { to, amount }: DepositRequest): Outcome {
      const target = getAccount.get(to)
      if (!target) return unknownAccount(to)
      if (target.clientId !== clientId) return problem(403, 'not-account-owner', 'Not your account', `Account ${to} belongs to another client.`)
      const id = `dp_${randomUUID()}`
      const createdAt = new Date().toISOString()
      addToBalance.run(amount, to)
      insertEntry.run(id, 'deposit', clientId, null, to, amount, createdAt)
      return jsonOutcome(201, { id, to, amount, createdAt, balanceAfter: target.balance + amount }, { Location: `/deposits/${id}` })
    },
  }
}
