// Every stage's checks, in the order the grader runs them. course.json lists
// the same ids; a test keeps the two in step.
import type { Check } from '../engine/check.ts'
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
