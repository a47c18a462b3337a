// A grade as Classroom 50 reads it: the result.json an autograder.py leaves
// in the submission's checkout (`classroom50/result/v1`, the contract of
// Classroom 50's runner.py: integer points, `test-name`, `passed`, `score`,
// `max-score`; fields it does not know are kept). A pure function of the v1
// result (docs/grade-result.md). The identity fields (classroom, assignment,
// submission, commit, release, review) come from the runner's environment,
// so classroom50/autograder.py adds them, not this.
import type { GradedCheckResult, GradeResult } from '../engine/gradeResult.ts'
import { type GradeFacts, gradeFacts } from '../engine/gradeResult.ts'
import { ungradedTest } from './ungraded.ts'

export const CLASSROOM50_SCHEMA = 'classroom50/result/v1'

export type Classroom50Test = {
  'test-name': string
  passed: boolean
  score: number
  'max-score': number
  /** Kept by Classroom 50 as it is: which check, and what it said. */
  check?: string
  regression?: boolean
  message: string
}

export type Classroom50Result = {
  schema: typeof CLASSROOM50_SCHEMA
  score: number
  'max-score': number
  tests: Classroom50Test[]
  /** The v1 result's own words about this grade, for whoever reads the file. */
  'idem-lab': GradeFacts
}

export function toClassroom50(result: GradeResult): Classroom50Result {
  const ungraded = ungradedTest(result)
  const tests: Classroom50Test[] = ungraded
    ? // Nothing was graded: one failed test that says why, worth the whole stage.
      [
        {
          'test-name': ungraded.name,
          passed: false,
          score: 0,
          'max-score': whole(result.maxScore),
          message: [ungraded.summary, ...ungraded.details].join('\n'),
        },
      ]
    : result.checks.map(toTest)
  return {
    schema: CLASSROOM50_SCHEMA,
    score: whole(result.score),
    'max-score': whole(result.maxScore),
    tests,
    'idem-lab': gradeFacts(result),
  }
}

const toTest = (check: GradedCheckResult): Classroom50Test => ({
  // Unique in a grade (a row's identity in Classroom 50's gradebook): every check id is.
  'test-name': `${check.stage}: ${check.title} [${check.id}]${check.regression ? ' (regression, not in the score)' : ''}`,
  passed: check.passed,
  // A regression check's layer comes solved in the stage folder: 0 of 0 either way, so the tests add up to the stage's score.
  score: check.regression ? 0 : whole(check.points),
  'max-score': check.regression ? 0 : whole(check.maxPoints),
  check: check.id,
  regression: check.regression,
  message: String(check.message),
})

/**
 * Classroom 50 takes whole points only. The v1 contract's points are whole
 * already (a check's points are integers, and a partial award is floored),
 * so nothing is rounded: a fraction would be a broken result, refused here
 * rather than rounded into a total that no longer matches the stage score.
 */
function whole(points: number): number {
  if (!Number.isInteger(points)) throw new Error(`a grade result with fractional points (${points}): the v1 contract's points are whole numbers`)
  return points
}
