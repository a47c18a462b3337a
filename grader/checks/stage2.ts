// Stage 2 checks (being written).
import type { Check } from '../check.ts'

export const stage2: Check[] = []
