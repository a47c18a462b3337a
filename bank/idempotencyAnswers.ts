// The answers an idempotency layer gives instead of executing. They live in
// the bank so that every stage speaks the same vocabulary (and CONTRACT.md can
// list them once); each stage decides *when* to send which.
import { jsonOutcome, problem, type Outcome } from './problem.ts'

export const missingKey = (): Outcome =>
  problem(
    400,
    'idempotency-key-missing',
    'Idempotency-Key required',
    'Send an Idempotency-Key header: a fresh UUID for each new transfer, the same one on every retry of it.',
  )

export const malformedKey = (reason: string): Outcome => problem(400, 'idempotency-key-malformed', 'Malformed Idempotency-Key', reason)

/** Not a problem body: a duplicate that was not executed again (stages 1–3). */
export const alreadyProcessed = (key: string): Outcome =>
  jsonOutcome(200, {
    status: 'already-processed',
    idempotencyKey: key,
    detail: 'A request with this Idempotency-Key was already accepted. It was not executed again.',
  })

export const keyReused = (): Outcome =>
  problem(422, 'idempotency-key-reused', 'Idempotency-Key reused', 'This key was already used with a different request body. Use a new key for a new request.')

export const requestInFlight = (retryAfterSeconds: number): Outcome =>
  problem(409, 'request-in-flight', 'Request in progress', 'A request with this Idempotency-Key is still being processed. Retry later to get its result.', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  })

/** The original request lost its claim (its lease expired and a retry took over): the retry's result counts. */
export const claimLost = (): Outcome =>
  problem(
    409,
    'idempotency-claim-lost',
    'Request superseded',
    'This request took too long and a retry with the same Idempotency-Key took over. Retry to get the result.',
    {
      headers: { 'Retry-After': '1' },
    },
  )

/**
 * The body cannot be fingerprinted (e.g. a lone surrogate: not I-JSON, RFC 7493).
 * The bank already refuses such bodies before any layer (body.ts); this is the
 * layer's safety net, in the same shape as the bank's invalid-body answer.
 */
export const notIJson = (reason: string): Outcome =>
  problem(400, 'invalid-body', 'Invalid request body', `The body is not I-JSON (RFC 7493): ${reason}`, {
    members: { errors: [{ path: '', message: reason }] },
  })

/** Marks a replayed response (Stripe's convention). */
export const REPLAYED_HEADER = 'Idempotent-Replayed'
