// The one error type that means "the server under test did something wrong",
// as opposed to a bug in the grader. It lives here, not with the checks, so
// that the bank client (and replay, bench) can throw it without importing the
// grader.
import type { Exchange } from './http.ts'
import type { Line } from './i18n/phrase.ts'

export type FailureDetails = {
  /** The request that showed the problem. */
  exchange?: Exchange
  expected?: Line
  got?: Line
}

export class CheckFailure extends Error {
  constructor(
    /** What went wrong, said in the reader's language when printed (Error.message holds its English). */
    readonly said: Line,
    readonly details: FailureDetails = {},
  ) {
    super(String(said))
  }
}
