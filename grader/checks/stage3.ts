// Stage 3 checks (being written).
import type { Check } from '../check.ts'

export const stage3: Check[] = []
