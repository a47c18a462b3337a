// A made-up class for the score-report tests: grade results written by hand,
// not by the grader, so the report's arithmetic (ranking, points per stage,
// pass rates) is tested against numbers the test derives itself. The real
// grader feeds the store in test/roster.test.ts.
import { RESULT_SCHEMA } from '#grader/engine/gradeResult.ts'
import type { GradeSummary } from '#grader/roster/resultSchema.ts'

export type Mark = 'pass' | 'fail' | 'timeout' | 'error'

/** Checks invented for these tests, over three stages. */
export const CHECKS = [
  { id: 'basics', stage: 0, points: 4 },
  { id: 'ledger', stage: 0, points: 6 },
  { id: 'key-required', stage: 1, points: 5 },
  { id: 'duplicate-not-executed', stage: 1, points: 5 },
  { id: 'malformed-key', stage: 1, points: 2 },
  { id: 'payload-changed', stage: 2, points: 6 },
  { id: 'reserialized', stage: 2, points: 4 },
] as const

export type CheckId = (typeof CHECKS)[number]['id']

/** A result of grading `stage` (2 unless said) in which every check passes except those in `marks`. */
export function result(seed: number, marks: Partial<Record<CheckId, Mark | 'skipped'>> = {}, stage = 2): GradeSummary {
  // The grader runs the graded stage first, then the earlier ones.
  const checks = CHECKS.filter((c) => c.stage <= stage)
    .sort((a, b) => b.stage - a.stage)
    .map((c) => {
      const status = marks[c.id] ?? 'pass'
      const passed = status === 'pass' || status === 'skipped'
      // A skipped check is worth 0 of 0, as the grader records it.
      const maxPoints = status === 'skipped' ? 0 : c.points
      return {
        id: c.id,
        stage: c.stage,
        title: `the ${c.id} check`,
        passed,
        status,
        points: status === 'pass' ? c.points : 0,
        maxPoints,
        message: status === 'pass' ? '' : `${c.id} went wrong (${status})`,
        regression: c.stage !== stage,
      }
    })
  const slug = ['unprotected', 'unique-key', 'fingerprint'][stage]!
  return {
    schema: RESULT_SCHEMA,
    stage,
    slug,
    seed,
    gradable: true,
    server: { started: true, reason: null },
    refused: null,
    passed: checks.every((c) => c.passed),
    // The stage's own checks, as the grader counts them: the regression checks are listed, not scored.
    score: checks.filter((c) => c.stage === stage).reduce((s, c) => s + c.points, 0),
    maxScore: checks.filter((c) => c.stage === stage).reduce((s, c) => s + c.maxPoints, 0),
    isolation: 'bwrap' as const,
    durationMs: 1234,
    rerun: `npm run grade -- ${stage} --seed ${seed} --dir /class/x`,
    checks,
  }
}

/** Learner ids are folder names: one of them tries HTML, one a spreadsheet formula. */
export const CLASS: Array<{ learner: string; marks: Partial<Record<CheckId, Mark>> }> = [
  { learner: 'ada', marks: {} },
  { learner: 'bo', marks: { reserialized: 'fail' } },
  { learner: 'cy<img src=x>', marks: { 'payload-changed': 'fail', reserialized: 'fail', 'malformed-key': 'fail' } },
  { learner: '=HYPERLINK("http://x")', marks: { 'duplicate-not-executed': 'error', 'payload-changed': 'fail', reserialized: 'fail' } },
  {
    learner: 'dee',
    marks: Object.fromEntries(CHECKS.map((c) => [c.id, 'timeout'])) as Record<CheckId, Mark>,
  },
]
