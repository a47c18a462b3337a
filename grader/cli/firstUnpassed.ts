// What a bare `npm run grade` grades: the first stage, in the course's order,
// not yet passed, as rustlings and CodeCrafters pick the next exercise. A
// stage is passed when its last full grade passed (progressRecord.ts) and its
// learner files are not the untouched starters (a stage reset to its starter
// since, npm run reset, has not passed whatever the record says).
import { course, type Stage } from '#harness/course.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { repoRoot } from '#harness/paths.ts'
import { isUntouched } from '#harness/starterHashes.ts'
import { type Progress, readProgress } from './progressRecord.ts'

/** Why a stage is not passed: never fully graded, its last full grade failed, or its files are the starter again. */
export type Unpassed = { stage: Stage; why: 'ungraded' | 'failed' | 'starter' }

/** The first stage of `stages` not yet passed, or none when every one has. */
export function firstUnpassed(stages: readonly Stage[], progress: Progress, isStarter: (stage: Stage) => boolean): Unpassed | undefined {
  for (const stage of stages) {
    const verdict = progress[stage.slug]
    if (!verdict) return { stage, why: 'ungraded' }
    if (!verdict.passed) return { stage, why: 'failed' }
    if (isStarter(stage)) return { stage, why: 'starter' }
  }
  return undefined
}

/** The learner's first stage not yet passed: the record in .lab/ (or LAB_HOME), and this course's stages/ as they are now. */
export const firstUnpassedHere = (): Unpassed | undefined => firstUnpassed(course.stages, readProgress(), (stage) => isUntouched(stage, repoRoot))

const WHY = { ungraded: 'pick.ungraded', failed: 'pick.failed', starter: 'pick.starter' } as const

/** The line a bare grade starts with: which stage it picked and why, or that every stage has passed. */
export function pickLine(pick: Unpassed | undefined, lang: Lang): string {
  return pick ? t(lang, WHY[pick.why], { number: pick.stage.number, slug: pick.stage.slug }) : t(lang, 'pick.allPassed')
}
