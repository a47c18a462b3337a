// Every known-wrong implementation, by stage. The self-tests grade each one
// and expect its `mustFail` check to fail.
import type { Mutant } from './mutant.ts'

export const mutants: Mutant[] = []
