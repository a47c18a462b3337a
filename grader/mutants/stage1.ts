// Stage 1 mutants (being written).
import type { Mutant } from './mutant.ts'

export const stage1Mutants: Mutant[] = []
