// What one check came to: the runner produces it, the reports print it, and
// the start-failure helpers build it for checks that never ran.
import type { Exchange } from '#harness/http.ts'
import type { Line } from '#harness/i18n/phrase.ts'

/**
 * 'skipped': the check needs more than the HTTP contract (check.needs) and the server is a --server command.
 * 'not-judged': the check found its precondition missing, a property another check tests and fails
 * (e.g. no lease at all: nothing that needs a lease to end can be judged); no points, and not a failure
 * of its own: the failure is that other check's (`blockedBy`).
 */
export type CheckStatus = 'pass' | 'fail' | 'timeout' | 'error' | 'skipped' | 'not-judged'

export type CheckResult = {
  id: string
  stage: number
  title: string
  passed: boolean
  status: CheckStatus
  /** Points earned: all of the check's points when it passes, else what it awarded (ctx.award), 0 by default. */
  points: number
  maxPoints: number
  /** What the check found: a Phrase, printed in the reader's language; a result document holds its English (Phrase.toJSON). */
  message: Line
  /** The check's hint; a start failure's or a refusal's own advice instead, when the check did not run. */
  hint: Line
  notes: Line[]
  durationMs: number
  /** Proof of which random inputs the check drew (same seed, same digest). */
  inputs: { draws: number; digest: string }
  failure?: { exchange?: Exchange; expected?: Line; got?: Line; serverLog?: string }
  /** With 'not-judged': the check whose failure left this one unjudgeable. */
  blockedBy?: string
  /** A histories check's reach: every transition of its stage's model, and how many histories took it (grader/model/coverage.ts). */
  coverage?: Coverage
}

export type Coverage = Array<{ transition: string; histories: number; unreachable?: string }>

/**
 * A result as a document holds it (grade()'s return, --json, the store, an
 * autograder's file): every sentence as its English. The terminal prints the
 * live CheckResult as each check ends, in the reader's language.
 */
export type CheckRecord = Omit<CheckResult, 'message' | 'hint' | 'notes' | 'failure'> & {
  message: string
  hint: string
  notes: string[]
  failure?: { exchange?: Exchange; expected?: string; got?: string; serverLog?: string }
}

/** `r` with its sentences in English. */
export function inEnglish(r: CheckResult): CheckRecord {
  const english = (line: Line | undefined) => (line === undefined ? undefined : String(line))
  // Spread first, then replaced: the fields keep their order (a result document is compared as text).
  return {
    ...r,
    message: String(r.message),
    hint: String(r.hint),
    notes: r.notes.map(String),
    failure: r.failure && { ...r.failure, expected: english(r.failure.expected), got: english(r.failure.got) },
  }
}

/** A check that failed on its own account: not passed, and not merely left unjudged by another's failure. */
export const isFailure = (r: Pick<CheckResult, 'passed' | 'status'>) => !r.passed && r.status !== 'not-judged'
