// Stage 1 checks (being written).
import type { Check } from '../check.ts'

export const stage1: Check[] = []
