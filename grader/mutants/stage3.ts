// Stage 3 mutants (being written).
import type { Mutant } from './mutant.ts'

export const stage3Mutants: Mutant[] = []
