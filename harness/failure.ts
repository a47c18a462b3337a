// The one error type that means "the server under test did something wrong",
// as opposed to a bug in the grader. It lives here, not with the checks, so
// that the bank client (and replay, bench) can throw it without importing the
// grader.
import type { Exchange } from './http.ts'

export type FailureDetails = {
  /** The request that showed the problem. */
  exchange?: Exchange
  expected?: string
  got?: string
}

export class CheckFailure extends Error {
  constructor(
    message: string,
    readonly details: FailureDetails = {},
  ) {
    super(message)
  }
}
