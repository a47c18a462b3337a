// Where a learner stands: for each stage, what its own folder scores on its own
// checks, whether it passes them, or whether it is still the untouched
// starter; and the one thing to do next. Regression failures are shown but do
// not decide: some regression checks call another stage's learner file (the
// stage 0 query, stage 2's canonicalize), whose state is that stage's.
// StageProgress is what --json records, in English; the table is rendered in
// the learner's language.
import chalk from 'chalk'
import { stageByNumber, type Stage } from '#harness/course.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { stageText } from '#harness/i18n/packs.ts'
import { repoRoot } from '#harness/paths.ts'
import { isFailure } from '../engine/checkResult.ts'
import type { GradeResult } from '../grade.ts'
import { isUntouched } from '#harness/starterHashes.ts'
import { describeSource, type Source } from '#harness/workspace.ts'
import { padToWidth, displayWidth } from './displayWidth.ts'

export type StageState = 'passed' | 'failed' | 'not started'

export type StageProgress = {
  stage: number
  slug: string
  title: string
  state: StageState
  /** Points of the stage's own checks (regression checks not counted: they test given layers). */
  score: number
  maxScore: number
  /** Regression checks of earlier stages that failed on this stage's folder. */
  regressionFailed: string[]
}

/** The learner files of a checkout, for the "not started" test; none for the reference solution. */
export function checkoutOf(source: Source): string | undefined {
  return source.kind === 'starter' ? repoRoot : source.kind === 'dir' ? source.path : undefined
}

/** The stage's learner files in `source` are still the starters (never so for the reference solution). */
export function isNotStarted(stage: Stage, source: Source): boolean {
  const checkout = checkoutOf(source)
  return checkout !== undefined && isUntouched(stage, checkout)
}

export function stageProgress(result: GradeResult, stage: Stage, source: Source): StageProgress {
  const own = result.checks.filter((c) => !c.regression)
  return {
    stage: stage.number,
    slug: stage.slug,
    title: stage.title,
    state: isNotStarted(stage, source) ? 'not started' : own.length > 0 && own.every((c) => c.passed) ? 'passed' : 'failed',
    // The grade's own score, as every other reader shows it.
    score: result.score,
    maxScore: result.maxScore,
    // A regression check left unjudged names the failed one that explains it.
    regressionFailed: result.checks.filter((c) => c.regression && isFailure(c)).map((c) => c.id),
  }
}

/** A stage not graded because it is still the starter (grade all): nothing ran, nothing scored. */
export function notStartedProgress(stage: Stage, maxScore: number): StageProgress {
  return { stage: stage.number, slug: stage.slug, title: stage.title, state: 'not started', score: 0, maxScore, regressionFailed: [] }
}

/** "next: stage 3 — npm run grade -- 3", from the first stage not passed; the capstone once all pass. */
export function nextStep(progress: Array<Pick<StageProgress, 'stage' | 'state'>>, source: Source, lang: Lang = 'en'): string {
  const todo = progress.find((p) => p.state !== 'passed')
  if (!todo) return t(lang, 'progress.capstone')
  const title = stageText(lang, stageByNumber(todo.stage)).title
  return t(lang, 'progress.next', { number: todo.stage, title, command: `npm run grade -- ${todo.stage}${describeSource(source)}` })
}

const MARK: Record<StageState, string> = { passed: chalk.green('✓'), failed: chalk.red('✗'), 'not started': chalk.dim('·') }
const STATE = { passed: 'progress.passed', failed: 'progress.failed', 'not started': 'progress.notStarted' } as const

export function renderProgress(progress: StageProgress[], source: Source, lang: Lang = 'en'): string {
  const titles = progress.map((p) => stageText(lang, stageByNumber(p.stage)).title)
  const width = Math.max(...titles.map(displayWidth))
  const lines = [chalk.bold(`\n${t(lang, 'progress.heading')}`)]
  progress.forEach((p, i) => {
    const regression = p.regressionFailed.length ? chalk.red(`  ${t(lang, 'progress.regression', { ids: p.regressionFailed.join(', ') })}`) : ''
    const score = `${p.score}/${p.maxScore}`.padStart(7)
    lines.push(
      `  ${MARK[p.state]} ${t(lang, 'progress.stage', { number: p.stage })}  ${padToWidth(titles[i]!, width)}  ${score}  ${t(lang, STATE[p.state])}${regression}`,
    )
  })
  lines.push('', chalk.bold(nextStep(progress, source, lang)))
  return lines.join('\n')
}
