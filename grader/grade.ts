// Grades one stage: the course's checks for it (grader/checks/), run by the
// engine (engine/grading.ts). What the command line, watch mode, rosters,
// the repetitions and the tests all call.
import { stageByNumber } from '#harness/course.ts'
import { checksOfGrade } from './checks/index.ts'
import type { GradeResult } from './engine/gradeResult.ts'
import { type GradeOptions, runGrading } from './engine/grading.ts'

export type { GradeOptions } from './engine/grading.ts'
export type { GradeResult } from './engine/gradeResult.ts'

/** The graded stage's checks, then every earlier stage's (unless --no-regression), filtered by --only. */
export function grade(options: GradeOptions): Promise<GradeResult> {
  const checks = checksOfGrade(stageByNumber(options.stage), options.noRegression).filter(({ check }) => !options.only || options.only.includes(check.id))
  return runGrading(options, checks)
}
