// The bank's store on PostgreSQL (db.ts): stage 6. READ COMMITTED lets two
// transfers read the same balance, so a movement locks its accounts first
// (FOR UPDATE, in id order so that two transfers between the same accounts
// never deadlock); money.ts's checks then see the truth.
import type { Postgres } from '../layer.ts'
import { type AccountRow, accountsOf, decide, moved, type Plan } from '../money.ts'
import type { Outcome } from '../problem.ts'
import type { EntryView, LedgerView, Store } from '../store.ts'
import { inTransaction, openPool, type Tx } from './db.ts'

const iso = (d: Date) => d.toISOString()

export async function openPgStore(url: string, poolMax: number): Promise<Store<Postgres>> {
  const pool = await openPool(url, poolMax)

  async function apply(tx: Tx, plan: Plan): Promise<Outcome> {
    for (const [id, delta] of plan.changes) await tx.query('UPDATE accounts SET balance = balance + $1 WHERE id = $2', [delta, id])
    const { id, kind, clientId, from, to, amount } = plan.entry
    const { rows } = await tx.query<{ createdAt: Date }>(
      `INSERT INTO ledger (id, kind, client_id, from_account, to_account, amount) VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING created_at AS "createdAt"`,
      [id, kind, clientId, from, to, amount],
    )
    return moved(plan, iso(rows[0]!.createdAt))
  }

  return {
    layerContext: { pool },
    async clientWithKey(apiKeyHash) {
      const { rows } = await pool.query<{ id: string }>('SELECT id FROM clients WHERE api_key_hash = $1', [apiKeyHash])
      return rows[0]?.id
    },
    async addClient({ id, name, apiKeyHash }) {
      await pool.query('INSERT INTO clients (id, name, api_key_hash) VALUES ($1, $2, $3)', [id, name, apiKeyHash])
    },
    async addAccount({ id, clientId, balance }) {
      await pool.query('INSERT INTO accounts (id, client_id, balance, opened_with) VALUES ($1, $2, $3, $3)', [id, clientId, balance])
    },
    async account(id) {
      const { rows } = await pool.query<AccountRow>('SELECT id, client_id AS "clientId", balance FROM accounts WHERE id = $1', [id])
      return rows[0]
    },
    async entry(kind, id, clientId) {
      const { rows } = await pool.query<Omit<EntryView, 'createdAt'> & { createdAt: Date }>(
        `SELECT id, from_account AS "from", to_account AS "to", amount, created_at AS "createdAt"
         FROM ledger WHERE id = $1 AND kind = $2 AND client_id = $3`,
        [id, kind, clientId],
      )
      return rows[0] && { ...rows[0], createdAt: iso(rows[0].createdAt) }
    },
    ledger(clients) {
      // REPEATABLE READ: accounts and entries from one snapshot, as SQLite's transaction gives.
      return inTransaction(pool, async (tx) => {
        await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
        // Whose rows: every client's (null), or those listed.
        const ofClients = '($1::text[] IS NULL OR client_id = ANY($1))'
        const accounts = await tx.query<LedgerView['accounts'][number]>(
          `SELECT id, client_id AS "clientId", balance, opened_with AS "openedWith" FROM accounts WHERE ${ofClients} ORDER BY seq`,
          [clients ?? null],
        )
        const entries = await tx.query<Omit<LedgerView['entries'][number], 'createdAt'> & { createdAt: Date }>(
          `SELECT id, kind, client_id AS "clientId", from_account AS "from", to_account AS "to", amount, created_at AS "createdAt"
           FROM ledger WHERE ${ofClients} ORDER BY seq`,
          [clients ?? null],
        )
        return { accounts: accounts.rows, entries: entries.rows.map((e) => ({ ...e, createdAt: iso(e.createdAt) })) }
      })
    },
    // One pooled connection for the movement and the layer's callback, which
    // may await on it; the core call happened before (app.ts), with no
    // connection taken and no transaction open.
    runMoneyMove(clientId, move, inSameTransaction) {
      return inTransaction(pool, async (tx) => {
        const { rows } = await tx.query<AccountRow>('SELECT id, client_id AS "clientId", balance FROM accounts WHERE id = ANY($1) ORDER BY id FOR UPDATE', [
          accountsOf(move),
        ])
        const decision = decide(clientId, move, new Map(rows.map((r) => [r.id, r])))
        const outcome = 'refused' in decision ? decision.refused : await apply(tx, decision.plan)
        await inSameTransaction?.(outcome, tx)
        return outcome
      })
    },
    close() {
      void pool.end()
    },
  }
}
