// Which stages the learner has passed, as the grader last found them: the
// verdict of each stage's last full grade of the course's own stages/ folder,
// kept in .lab/progress.json (LAB_HOME moves it, as it moves the hints).
// Only a grade that judged the learner's own code on every check of the stage
// is a verdict: not --only or --no-regression (a part of the grade), not
// --solution (our code), not --dir or --server (someone else's). "Passed"
// means the stage's own checks all passed, as in `grade -- all`'s progress
// table (grader/output/progress.ts): regression checks judge the given layers.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { z } from 'zod'
import { stageByNumber } from '#harness/course.ts'
import { labFile } from '#harness/labHome.ts'
import { interrupted } from '#harness/processes.ts'
import type { Source } from '#harness/workspace.ts'
import type { GradeResult } from '../grade.ts'

const Verdict = z.object({
  passed: z.boolean(),
  /** The stage's score (its own checks' points), and the most it could be. */
  score: z.number(),
  maxScore: z.number(),
  seed: z.number(),
  /** When it was graded, ISO 8601. */
  at: z.string(),
})
export type Verdict = z.infer<typeof Verdict>

/** The last verdict of each stage graded, by slug. */
const Progress = z.record(z.string(), Verdict)
export type Progress = z.infer<typeof Progress>

export const progressFile = (): string => labFile('progress.json')

export function readProgress(file = progressFile()): Progress {
  try {
    return Progress.parse(JSON.parse(readFileSync(file, 'utf8')))
  } catch {
    return {} // none yet, or one we cannot read: as if nothing had been graded
  }
}

/** How a grade was asked for: what it graded, and whether all of it. */
export type GradeKind = { source: Source; partial: boolean; server: boolean }

/** A full grade of the learner's own stages/: the only kind whose verdict is recorded (and never one cut by Ctrl-C or q). */
export const isRecorded = (scope: GradeKind): boolean => scope.source.kind === 'starter' && !scope.partial && !scope.server && !interrupted()

/** Every one of the stage's own checks ran and passed (a grade that stopped at a failure has not). */
export function ownChecksPassed(result: Pick<GradeResult, 'stage' | 'checks'>): boolean {
  const passed = new Set(result.checks.filter((c) => !c.regression && c.passed).map((c) => c.id))
  return stageByNumber(result.stage).checks.every((id) => passed.has(id))
}

/** Records `result` as its stage's last verdict when the grade counts (isRecorded); returns whether it did. */
export function recordGrade(result: GradeResult, scope: GradeKind, file = progressFile(), now = new Date()): boolean {
  if (!isRecorded(scope)) return false
  const verdict: Verdict = { passed: ownChecksPassed(result), score: result.score, maxScore: result.maxScore, seed: result.seed, at: now.toISOString() }
  const progress = { ...readProgress(file), [result.slug]: verdict }
  mkdirSync(dirname(file), { recursive: true })
  // Written whole, then renamed: a command reading it meanwhile sees the old record or the new, never half of one.
  const partial = `${file}.${process.pid}`
  writeFileSync(partial, `${JSON.stringify(progress, null, 2)}\n`)
  renameSync(partial, file)
  return true
}
