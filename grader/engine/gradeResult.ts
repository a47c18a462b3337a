// What a grade comes to, as --json writes it and every reader takes it (the
// summary under a grade, `grade -- all`'s table, rosters, `npm run scores`,
// scores:import, the adapters): docs/grade-result.md describes it, and
// docs/grade-result.schema.json is its JSON Schema. A field that changes
// meaning changes RESULT_SCHEMA with it.
//
// The score is computed one way, here: the points of the graded stage's own
// checks. A grade also runs earlier stages' checks as regression; they judge
// layers the stage folder receives solved (given/), so they are listed,
// marked `regression`, and never add to the stage's score.
import type { Isolation } from '#harness/isolation.ts'
import type { CheckRecord } from './checkResult.ts'
import type { KeptServer } from './keep.ts'

/** The contract's name and version: written into every result, required of every result read. */
export const RESULT_SCHEMA = 'idem-lab/grade/v1'

/** One check's result in a grade: marked when it belongs to an earlier stage. */
export type GradedCheckResult = CheckRecord & { regression: boolean }

export type GradeResult = {
  schema: typeof RESULT_SCHEMA
  stage: number
  slug: string
  seed: number
  /**
   * false: nothing was graded (the server never started, or the answer was
   * refused), so the score is no verdict on the learner's code: an adapter
   * must not count the attempt.
   */
  gradable: boolean
  /** Whether the grade's server answered at least once; if not, why (the first line of the error). */
  server: { started: boolean; reason: string | null }
  /** Why the graded folder scores nothing (it loads the reference answer), or null. */
  refused: { reason: string } | null
  /** Every check that ran passed, regression checks included (the exit code says the same). */
  passed: boolean
  /** The stage's score: its own checks' points (stageScore). */
  score: number
  maxScore: number
  /** How far the graded code was kept from the grader: bwrap, user (run as nobody) or none (harness/isolation.ts). */
  isolation: Isolation
  durationMs: number
  /** How long the first server took to start (spawn to GET /health 200): the report names a slow start. */
  serverStartMs: number
  /** Server processes the grade spawned: the first start, every instance it had to add, every restart. */
  serverStarts: number
  rerun: string
  checks: GradedCheckResult[]
  /** With `keep`: the server of the first failure, still running. */
  kept?: KeptServer
}

type Scored = { stage: number; points: number; maxPoints: number }

/** What a platform's document carries of the v1 result beside its tests: enough to find the grade again. */
export type GradeFacts = Pick<GradeResult, 'stage' | 'seed' | 'gradable' | 'passed' | 'rerun' | 'isolation'> & { schema: typeof RESULT_SCHEMA }

export const gradeFacts = (r: GradeResult): GradeFacts => ({
  schema: RESULT_SCHEMA,
  stage: r.stage,
  seed: r.seed,
  gradable: r.gradable,
  passed: r.passed,
  rerun: r.rerun,
  isolation: r.isolation,
})

/** A check of an earlier stage, run in a grade of `graded` to see that nothing it judged broke. */
export const isRegression = (check: { stage: number }, graded: number): boolean => check.stage !== graded

/** The stage's score and the most it could be: its own checks' points, regression checks left out. */
export function stageScore(graded: number, checks: readonly Scored[]): { score: number; maxScore: number } {
  const own = checks.filter((c) => !isRegression(c, graded))
  return { score: sum(own.map((c) => c.points)), maxScore: sum(own.map((c) => c.maxPoints)) }
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
