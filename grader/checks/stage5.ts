// Stage 5 checks (being written).
import type { Check } from '../check.ts'

export const stage5: Check[] = []
