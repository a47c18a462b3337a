// What the bank needs of its database, whichever it is: the SQLite file
// (sqliteStore.ts) or PostgreSQL (pg/store.ts). The app (app.ts) is written
// once against this; each driver holds only its SQL and its transactions.
import type { StoreKind } from './layer.ts'
import type { AccountRow, Move } from './money.ts'
import type { Outcome } from './problem.ts'

/** A ledger row as GET /transfers/{id} and GET /deposits/{id} show it. */
export type EntryView = { id: string; from: string | null; to: string; amount: number; createdAt: string }

/** GET /admin/ledger's body: every account and every entry, in creation order, from one snapshot. */
export type LedgerView = {
  accounts: Array<{ id: string; clientId: string; balance: number; openedWith: number }>
  entries: Array<EntryView & { kind: Move['kind']; clientId: string }>
}

export interface Store<K extends StoreKind> {
  /** Given to the stage's createLayer, beside the config: where the layer keeps its own tables. */
  readonly layerContext: K['context']
  /** The client whose API key hashes to this, if any. */
  clientWithKey(apiKeyHash: string): Promise<string | undefined>
  addClient(client: { id: string; name: string; apiKeyHash: string }): Promise<void>
  addAccount(account: { id: string; clientId: string; balance: number }): Promise<void>
  account(id: string): Promise<AccountRow | undefined>
  /** The client's own entry of this kind, if any. */
  entry(kind: Move['kind'], id: string, clientId: string): Promise<EntryView | undefined>
  /** Every account and entry, or only those of `clients` (their accounts, and the entries they made). */
  ledger(clients?: string[]): Promise<LedgerView>
  /**
   * One money movement in one transaction: read the accounts, decide
   * (money.ts), apply, then `inSameTransaction`, then commit; if anything
   * throws, nothing commits. The driver owns the whole transaction because
   * the stores cannot share one shape of it: better-sqlite3's is synchronous
   * and must never span an await (every request shares its one connection),
   * PostgreSQL's is a pooled connection that awaits every statement. So the
   * callback's type is the store's (layer.ts's `Sqlite` or `Postgres`).
   */
  runMoneyMove(clientId: string, move: Move, inSameTransaction?: K['inSameTransaction']): Promise<Outcome>
  close(): void
}
