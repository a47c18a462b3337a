// The seam between the bank and a stage. The bank authenticates the caller and
// validates the body; then every money-moving POST becomes an Operation that the
// stage's idempotency layer handles. The layer decides whether to call
// `execute()` (the transfer) at all, and what to answer.
import type { Config } from './config.ts'
import type { Db } from './db.ts'
import type { Outcome } from './problem.ts'

export type { Outcome } from './problem.ts'

export type Operation = {
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
   * Moves the money. Waits for the core-banking call, then commits in one
   * SQLite transaction. `inSameTransaction` runs inside that transaction,
   * after the movement, with the outcome about to be sent: whatever it writes
   * commits together with the money, and if it throws, nothing commits.
   * A core-banking failure returns a 503 outcome and commits nothing.
   */
  execute(inSameTransaction?: (outcome: Outcome) => void): Promise<Outcome>
}

export type LayerContext = {
  db: Db
  config: Config
}

export type Layer = {
  handle(op: Operation): Promise<Outcome>
  /** Extra response headers the bank adds to every response (e.g. a published key policy). */
  policyHeaders?: Record<string, string>
}

/** What every stage's idempotency.ts exports. */
export type CreateLayer = (ctx: LayerContext) => Layer
