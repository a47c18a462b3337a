// npm run grade -- all: grades each stage's own folder with that stage's checks
// (and its regression), one stage after the other with one seed, then prints
// where the learner stands and what to do next.
import { writeFileSync } from 'node:fs'
import { course } from '../harness/course.ts'
import { renderProgress, stageProgress, type StageProgress } from './progress.ts'
import { printCheck, printHeader, stageHeadings, printSummary, printVerboseExchange } from './report.ts'
import type { GradeResult } from './runner.ts'
import { describeSource, type Source } from '../harness/workspace.ts'

export type GradeAllOptions = { source: Source; seed: number; verbose: boolean; json?: string; sandbox?: boolean; sandboxTmp?: string }

export type GradeAllResult = {
  seed: number
  passed: boolean
  rerun: string
  progress: StageProgress[]
  stages: GradeResult[]
}

export async function gradeAll(o: GradeAllOptions): Promise<number> {
  const { grade } = await import('./runner.ts')
  const stages: GradeResult[] = []
  const progress: StageProgress[] = []
  for (const stage of course.stages) {
    const where = o.source.kind === 'solution' ? `solutions/${stage.folder}` : o.source.kind === 'dir' ? o.source.path : `stages/${stage.folder}`
    printHeader(stage, o.seed, where)
    const result = await grade({
      stage: stage.number,
      seed: o.seed,
      source: o.source,
      sandbox: o.sandbox,
      sandboxTmp: o.sandboxTmp,
      onExchange: o.verbose ? printVerboseExchange : undefined,
      onCheckStart: stageHeadings(stage.number),
      onCheckEnd: printCheck,
    })
    printSummary(result)
    stages.push(result)
    progress.push(stageProgress(result, stage, o.source))
  }
  console.log(renderProgress(progress, o.source))
  const passed = stages.every((r) => r.passed)
  if (o.json) {
    const payload: GradeAllResult = { seed: o.seed, passed, rerun: `npm run grade -- all --seed ${o.seed}${describeSource(o.source)}`, progress, stages }
    writeFileSync(o.json, `${JSON.stringify(payload, null, 2)}\n`)
  }
  return passed ? 0 : 1
}
