// Stage 2 mutants (being written).
import type { Mutant } from './mutant.ts'

export const stage2Mutants: Mutant[] = []
