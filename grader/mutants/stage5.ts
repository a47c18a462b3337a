// Stage 5 mutants (being written).
import type { Mutant } from './mutant.ts'

export const stage5Mutants: Mutant[] = []
