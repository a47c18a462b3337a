// What must be equal between two grades of one code with one seed: the
// verdicts, points, messages, hints and random inputs; not the timings, nor
// the notes (how concurrent requests interleaved may differ).
import type { GradeResult } from '#grader/grade.ts'

export const stable = (r: GradeResult) => ({
  stage: r.stage,
  seed: r.seed,
  passed: r.passed,
  score: r.score,
  maxScore: r.maxScore,
  rerun: r.rerun,
  checks: r.checks.map((c) => ({
    id: c.id,
    stage: c.stage,
    title: c.title,
    hint: c.hint,
    passed: c.passed,
    points: c.points,
    message: c.message,
    inputs: c.inputs,
  })),
})
