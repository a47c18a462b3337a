// Stage 4 mutants (being written).
import type { Mutant } from './mutant.ts'

export const stage4Mutants: Mutant[] = []
