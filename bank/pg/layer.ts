// The seam between the bank and stage 6, on PostgreSQL: layer.ts's Operation,
// with an asynchronous execute whose callback gets the money's own
// transaction (`tx`), so what it writes commits or rolls back with the money.
import type { Config } from '../config.ts'
import type { Operation, Outcome } from '../layer.ts'
import type { Pool, Tx } from './db.ts'

export type { Outcome } from '../layer.ts'
export type { Pool, Tx } from './db.ts'

/**
 * layer.ts's Operation (its `headers` too, with the same two rules: never
 * store a credential, and no header but Idempotency-Key decides whether a
 * request executes), with the PostgreSQL execute.
 */
export type PgOperation = Omit<Operation, 'execute'> & {
  /**
   * Waits for the core-banking call (no transaction is open during it), then
   * moves the money in one transaction on a pooled connection.
   * `inSameTransaction(outcome, tx)` runs inside it, after the movement: use
   * `tx` (not the pool) for what must commit with the money; if it throws,
   * nothing commits. A core failure returns a 503 outcome and commits nothing.
   */
  execute(inSameTransaction?: (outcome: Outcome, tx: Tx) => void | Promise<void>): Promise<Outcome>
}

export type PgLayerContext = {
  pool: Pool
  config: Config
}

export type PgLayer = {
  handle(op: PgOperation): Promise<Outcome>
  policyHeaders?: Record<string, string>
}

/** What stage 6's idempotency.ts exports. */
export type CreatePgLayer = (ctx: PgLayerContext) => PgLayer | Promise<PgLayer>
