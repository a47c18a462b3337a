// The seam between the bank and a stage. The bank authenticates the caller and
// validates the body; then every money-moving POST becomes an Operation that the
// stage's idempotency layer handles. The layer decides whether to call
// `execute()` (the transfer) at all, and what to answer.
//
// One seam for both stores: the type argument says which store the layer runs
// on (`Sqlite`, the default for a layer, stages 0–5; `Postgres`, stage 6), and
// so what createLayer is given and what execute's callback gets and may return.
import type { Config } from './config.ts'
import type { Db } from './db.ts'
import type { Pool, Tx } from './pg/db.ts'
import type { Outcome } from './problem.ts'

export type { Outcome } from './problem.ts'
export type { Pool, Tx } from './pg/db.ts'

/**
 * What differs between the stores, as a layer sees it: `context`, what
 * createLayer is given (beside the config) to keep its own tables; and
 * `inSameTransaction`, the callback execute accepts: the handle on the money's
 * transaction it gets (`tx`), and whether it may await.
 */
export type StoreKind = { context: object; inSameTransaction: (outcome: Outcome, tx: never) => void | Promise<void> }

/**
 * The SQLite file. Its transaction is synchronous (better-sqlite3, one
 * connection shared by every request), so the callback must finish its writes
 * without awaiting; `tx` is that connection.
 */
export type Sqlite = { context: { db: Db }; inSameTransaction: (outcome: Outcome, tx: Db) => void }

/** PostgreSQL (stage 6): `tx` is the pooled connection the money's transaction runs on, and the callback may await it. */
export type Postgres = { context: { pool: Pool }; inSameTransaction: (outcome: Outcome, tx: Tx) => void | Promise<void> }

/**
 * A money-moving request, handed to the layer. `Operation` without a type
 * argument is one on either store, whose callback gets a `tx` it cannot use:
 * what a helper that serves every stage takes (given/'s identify, executeClaimed).
 */
export type Operation<S extends StoreKind = StoreKind> = {
  /** The authenticated client making the request. */
  clientId: string
  /**
   * The bank's name for the route: method and path as the route is defined,
   * `POST /transfers` or `POST /deposits`, however the client spelled the URL.
   * Scope keys by this.
   */
  route: string
  /**
   * The URL path exactly as the client spelled it (`/TRANSFERS/`, say), for
   * logs. Two spellings of one route are one route: scope by `route`.
   */
  path: string
  /** The raw `Idempotency-Key` header, exactly as received (undefined when absent). */
  idempotencyKey: string | undefined
  /**
   * The request's headers as received: names in lower case, a header sent on
   * several lines joined as Node joins it (`req.headers`), for logs and
   * tracing. Two rules bind a layer:
   * - never store a credential: `authorization` holds the client's API key
   *   (the bank keeps only its hash), so it must not reach a key row, a stored
   *   response or a log line; storing all of these headers stores it;
   * - no header but `Idempotency-Key` may decide whether a request executes
   *   (a request id, a User-Agent or a retry counter is not an intent).
   */
  headers: Readonly<Record<string, string>>
  /** The JSON body, parsed and validated. */
  payload: unknown
  /** The body text exactly as the client's library serialized it. */
  rawBody: string
  /**
   * Moves the money. Waits for the core-banking call (no transaction is open
   * during it), then moves the money in one transaction.
   * `inSameTransaction(outcome, tx)` runs inside that transaction, after the
   * movement, with the outcome about to be sent: whatever it writes (on `tx`
   * on PostgreSQL, not the pool) commits together with the money, and if it
   * throws, nothing commits. A core-banking failure returns a 503 outcome and
   * commits nothing.
   */
  execute(inSameTransaction?: S['inSameTransaction']): Promise<Outcome>
}

export type LayerContext<S extends StoreKind = Sqlite> = S['context'] & { config: Config }

export type Layer<S extends StoreKind = Sqlite> = {
  handle(op: Operation<S>): Promise<Outcome>
  /** Extra response headers the bank adds to every response (e.g. a published key policy). */
  policyHeaders?: Record<string, string>
}

/**
 * What every stage's idempotency.ts exports. The bank calls it once it has
 * opened its store, and again each time the grader gives the running
 * instance other settings or another database (bank/generations.ts): keep
 * the layer's state in what it returns, not in module-level variables,
 * which outlive it.
 */
export type CreateLayer<S extends StoreKind = Sqlite> = (ctx: LayerContext<S>) => Layer<S> | Promise<Layer<S>>
