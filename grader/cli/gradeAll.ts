// npm run grade -- all: grades each stage's own folder with that stage's checks
// (and its regression), one stage after the other with one seed, then prints
// where the learner stands and what to do next. A stage whose learner files
// are still the starters is "not started": it is not graded (no server, no
// regression), which would only take minutes to say that a starter fails.
import { writeFileSync } from 'node:fs'
import chalk from 'chalk'
import { course, type Stage } from '#harness/course.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { isNotStarted, notStartedProgress, renderProgress, stageProgress, type StageProgress } from '../output/progress.ts'
import { printCheck, printDatabaseStart, printHeader, stageHeadings, printSummary, printVerboseExchange } from '../output/report.ts'
import { type GradeResult, RESULT_SCHEMA } from '#grader/engine/gradeResult.ts'
import { type Isolation, isolationOf } from '#harness/isolation.ts'
import { InterruptedError, interrupted } from '#harness/processes.ts'
import { describeSource, type Source } from '#harness/workspace.ts'
import { rerunCommand } from '../engine/rerun.ts'
import { recordGrade } from './progressRecord.ts'

export type GradeAllOptions = { source: Source; seed: number; verbose: boolean; json?: string; sandbox?: boolean; sandboxTmp?: string; lang: Lang }

/** A stage's grade; for a stage not started, one without checks (none ran), marked so. */
export type StageGrade = GradeResult & { notStarted?: true }

export type GradeAllResult = {
  seed: number
  passed: boolean
  rerun: string
  progress: StageProgress[]
  stages: StageGrade[]
}

export async function gradeAll(o: GradeAllOptions): Promise<number> {
  // Loaded here, not at the top: a check module that fails to load is the grader failing (grade.ts).
  const { grade } = await import('../grade.ts')
  const { maxScoreOfGrade } = await import('../checks/index.ts')
  const stages: StageGrade[] = []
  const progress: StageProgress[] = []
  for (const stage of course.stages) {
    // Interrupted: no next stage, and no progress table made of the stages graded so far.
    if (interrupted()) throw new InterruptedError()
    const where = o.source.kind === 'solution' ? `solutions/${stage.folder}` : o.source.kind === 'dir' ? o.source.path : `stages/${stage.folder}`
    printHeader(stage, o.seed, where, o.lang)
    if (isNotStarted(stage, o.source)) {
      const gradeIt = `npm run grade -- ${stage.number}${describeSource(o.source)}`
      console.log(chalk.dim(`  ${t(o.lang, 'all.notStarted', { command: gradeIt })}`))
      const maxScore = maxScoreOfGrade(stage)
      stages.push(notStartedGrade(stage, o.seed, maxScore, rerunCommand(stage.number, o.seed, o.source), isolationOf(!!o.sandbox)))
      progress.push(notStartedProgress(stage, maxScore))
      continue
    }
    const result = await grade({
      stage: stage.number,
      seed: o.seed,
      source: o.source,
      sandbox: o.sandbox,
      sandboxTmp: o.sandboxTmp,
      onExchange: o.verbose ? printVerboseExchange : undefined,
      onCheckStart: stageHeadings(stage.number, o.lang),
      onDatabaseStart: (s) => printDatabaseStart(s, o.lang),
      onCheckEnd: (r) => printCheck(r, o.lang),
    })
    recordGrade(result, { source: o.source, partial: false, server: false })
    printSummary(result, o.lang)
    stages.push(result)
    progress.push(stageProgress(result, stage, o.source))
  }
  if (interrupted()) throw new InterruptedError()
  console.log(renderProgress(progress, o.source, o.lang))
  const passed = stages.every((r) => r.passed)
  if (o.json) {
    const payload: GradeAllResult = { seed: o.seed, passed, rerun: `npm run grade -- all --seed ${o.seed}${describeSource(o.source)}`, progress, stages }
    writeFileSync(o.json, `${JSON.stringify(payload, null, 2)}\n`)
  }
  return passed ? 0 : 1
}

/** What --json says of a stage not started: nothing graded (no server, no check run), and not passed (a starter fails). */
function notStartedGrade(stage: Stage, seed: number, maxScore: number, rerun: string, isolation: Isolation): StageGrade {
  return {
    schema: RESULT_SCHEMA,
    stage: stage.number,
    slug: stage.slug,
    seed,
    gradable: false,
    server: { started: false, reason: 'not started: its learner files are still the starters' },
    refused: null,
    passed: false,
    score: 0,
    maxScore,
    // Nothing of it ran: the isolation its grade would have had.
    isolation,
    durationMs: 0,
    serverStartMs: 0,
    serverStarts: 0,
    rerun,
    checks: [],
    notStarted: true,
  }
}
