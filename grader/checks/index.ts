// Every stage's checks, in the order the grader runs them. course.json lists
// the same ids; a test keeps the two in step.
import type { Check } from '../check.ts'
import { stage0 } from './stage0.ts'
import { stage1 } from './stage1.ts'
import { stage2 } from './stage2.ts'
import { stage3 } from './stage3.ts'
import { stage4 } from './stage4.ts'
import { stage5 } from './stage5.ts'
import { stage6 } from './stage6.ts'

const byStage: Check[][] = [stage0, stage1, stage2, stage3, stage4, stage5, stage6]

export function checksFor(stage: number): Check[] {
  return byStage[stage] ?? []
}
