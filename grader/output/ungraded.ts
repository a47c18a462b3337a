// A grade in which nothing was graded (docs/grade-result.md: `gradable`
// false), as the one test an autograder platform shows for it: the server
// never started, or the answer was refused as copied. Every check then fails
// with the same reason, and fifty failed tests would bury the one line that
// says what to fix.
import type { GradeResult } from '../engine/gradeResult.ts'
import { t } from '#harness/i18n/messages.ts'

export type UngradedTest = {
  /** The test's name: what happened, for the stage. */
  name: string
  /** One line above the tests: that this attempt graded nothing. */
  summary: string
  /** The test's text: why, in the grader's words (the first check's message carries the error with file:line), and what to do. */
  details: string[]
}

/** The one test that stands for every check when nothing was graded; undefined for a grade that judged the code. */
export function ungradedTest(result: GradeResult): UngradedTest | undefined {
  if (result.gradable) return undefined
  const first = result.checks.find((c) => !c.passed)
  const hint = first?.hint ? [t('en', 'failure.hint', { hint: first.hint })] : []
  const summary = "Nothing was graded: this attempt's 0 is no verdict on your code. Fix what stopped it, then submit again."
  if (result.refused)
    return {
      name: `stage ${result.stage}: the answer was refused`,
      summary,
      details: [result.refused.reason, ...hint],
    }
  const reason = result.server.reason ?? 'the server did not start'
  return {
    name: `stage ${result.stage}: the server did not start`,
    summary,
    // The first check's message is the reason with what the server printed; the reason alone when there is none.
    details: [first && String(first.message).startsWith(reason) ? String(first.message) : reason, ...hint],
  }
}
