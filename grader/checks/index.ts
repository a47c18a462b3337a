// Every stage's checks, in the order the grader runs them. course.json lists
// the same ids; a test keeps the two in step.
import { skippedOnDatabase, type Check, type GradedCheck } from '../engine/check.ts'
import { stageScore } from '../engine/gradeResult.ts'
import { course, type Stage } from '#harness/course.ts'
import { stage0 } from './stage0.ts'
import { stage1 } from './stage1.ts'
import { credentialChecks } from './credentialsAtRest.ts'
import { stage2 } from './stage2.ts'
import { stage3 } from './stage3.ts'
import { stage4 } from './stage4.ts'
import { stage5 } from './stage5.ts'
import { stage6 } from './stage6.ts'
import { historiesCheck } from './histories.ts'

// Each stage with keys ends with its histories check: the model of the stage
// judges random histories once its hand-written checks have passed.
// Stage 1's checks are stage1.ts's, then no-credentials-at-rest (its own module: it reads the layer's rows).
const byStage: Check[][] = [stage0, [...stage1, ...credentialChecks], stage2, stage3, stage4, stage5, stage6].map((checks, stage) =>
  stage === 0 ? checks : [...checks, historiesCheck(stage)],
)

export function checksFor(stage: number): Check[] {
  return byStage[stage] ?? []
}

/**
 * The checks a grade of `graded` runs, in order: its own, then every earlier
 * stage's as regression (unless `noRegression`), less those that judge only
 * their own stage (regression: false, the earlier histories checks).
 */
export function checksOfGrade(graded: Stage, noRegression = false): GradedCheck[] {
  return course.stages
    .filter((s) => s.number <= graded.number && (!noRegression || s.number === graded.number))
    .reverse()
    .flatMap((stage) => checksFor(stage.number).map((check) => ({ check, stage })))
    .filter(({ check, stage }) => check.regression !== false || stage.number === graded.number)
}

/** The most a grade of `graded` can score (stageScore: its own checks), less the checks skipped on its database. */
export function maxScoreOfGrade(graded: Stage): number {
  const counted = checksOfGrade(graded).filter(({ check }) => !skippedOnDatabase(check, graded))
  return stageScore(
    graded.number,
    counted.map(({ check, stage }) => ({ stage: stage.number, points: check.points, maxPoints: check.points })),
  ).maxScore
}
