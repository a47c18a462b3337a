// Every known-wrong implementation, by stage. The self-tests grade each one
// and expect its `mustFail` check to fail.
import type { Mutant } from './mutant.ts'
import { stage0Mutants } from './stage0.ts'
import { stage1Mutants } from './stage1.ts'
import { stage2Mutants } from './stage2.ts'
import { stage3Mutants } from './stage3.ts'
import { stage4Mutants } from './stage4.ts'
import { stage5Mutants } from './stage5.ts'
import { stage6Mutants } from './stage6.ts'

export const mutants: Mutant[] = [...stage0Mutants, ...stage1Mutants, ...stage2Mutants, ...stage3Mutants, ...stage4Mutants, ...stage5Mutants, ...stage6Mutants]
