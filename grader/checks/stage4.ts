// Stage 4 checks (being written).
import type { Check } from '../check.ts'

export const stage4: Check[] = []
