// The bank's store on the SQLite file (db.ts): stages 0–5.
import type { Db } from './db.ts'
import type { Sqlite } from './layer.ts'
import { type AccountRow, accountsOf, decide, moved, type Plan } from './money.ts'
import type { Outcome } from './problem.ts'
import type { EntryView, LedgerView, Store } from './store.ts'

export function sqliteStore(db: Db): Store<Sqlite> {
  const findClient = db.prepare<[string], { id: string }>('SELECT id FROM clients WHERE api_key_hash = ?')
  const getAccount = db.prepare<[string], AccountRow>('SELECT id, client_id AS clientId, balance FROM accounts WHERE id = ?')
  const getEntry = db.prepare<[string, string, string], EntryView>(
    `SELECT id, from_account AS "from", to_account AS "to", amount, created_at AS createdAt
     FROM ledger WHERE id = ? AND kind = ? AND client_id = ?`,
  )
  const addToBalance = db.prepare<[number, string]>('UPDATE accounts SET balance = balance + ? WHERE id = ?')
  const insertEntry = db.prepare<[string, string, string, string | null, string, number, string]>(
    `INSERT INTO ledger (id, kind, client_id, from_account, to_account, amount, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  )
  function apply(plan: Plan): Outcome {
    const createdAt = new Date().toISOString()
    for (const [id, delta] of plan.changes) addToBalance.run(delta, id)
    const { id, kind, clientId, from, to, amount } = plan.entry
    insertEntry.run(id, kind, clientId, from, to, amount, createdAt)
    return moved(plan, createdAt)
  }
  // Whose rows: every client's (null), or those in a JSON array of client ids.
  const ofClients = '(? IS NULL OR client_id IN (SELECT value FROM json_each(?)))'
  const ledgerAccounts = db.prepare<[string | null, string | null], LedgerView['accounts'][number]>(
    `SELECT id, client_id AS clientId, balance, opened_with AS openedWith FROM accounts WHERE ${ofClients} ORDER BY rowid`,
  )
  const ledgerEntries = db.prepare<[string | null, string | null], LedgerView['entries'][number]>(
    `SELECT id, kind, client_id AS clientId, from_account AS "from", to_account AS "to", amount, created_at AS createdAt
     FROM ledger WHERE ${ofClients} ORDER BY seq`,
  )
  // One transaction, so accounts and entries come from one snapshot.
  const readLedger = db.transaction(
    (clients: string | null): LedgerView => ({ accounts: ledgerAccounts.all(clients, clients), entries: ledgerEntries.all(clients, clients) }),
  )

  return {
    layerContext: { db },
    async clientWithKey(apiKeyHash) {
      return findClient.get(apiKeyHash)?.id
    },
    async addClient({ id, name, apiKeyHash }) {
      db.prepare('INSERT INTO clients (id, name, api_key_hash, created_at) VALUES (?, ?, ?, ?)').run(id, name, apiKeyHash, new Date().toISOString())
    },
    async addAccount({ id, clientId, balance }) {
      db.prepare('INSERT INTO accounts (id, client_id, balance, opened_with, created_at) VALUES (?, ?, ?, ?, ?)').run(
        id,
        clientId,
        balance,
        balance,
        new Date().toISOString(),
      )
    },
    async account(id) {
      return getAccount.get(id)
    },
    async entry(kind, id, clientId) {
      return getEntry.get(id, kind, clientId)
    },
    async ledger(clients) {
      return readLedger(clients ? JSON.stringify(clients) : null)
    },
    async runMoneyMove(clientId, move, inSameTransaction) {
      // better-sqlite3's transaction is synchronous: its body runs to the end
      // before any other request's statement can, on the one connection they
      // all share, so nothing in it may await (the layer's callback included:
      // layer.ts's Sqlite callback returns void). IMMEDIATE takes the write lock up
      // front, so two processes never interleave their balance checks and updates.
      return db
        .transaction(() => {
          const accounts = new Map<string, AccountRow>()
          for (const id of accountsOf(move)) {
            const row = getAccount.get(id)
            if (row) accounts.set(id, row)
          }
          const decision = decide(clientId, move, accounts)
          const outcome = 'refused' in decision ? decision.refused : apply(decision.plan)
          inSameTransaction?.(outcome, db)
          return outcome
        })
        .immediate()
    },
    close() {
      db.close()
    },
  }
}
