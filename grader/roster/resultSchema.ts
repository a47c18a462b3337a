// The shape of a grade result file (`npm run grade -- N --json FILE`), as the
// results store takes it in. Result files come from grader children and from
// CI runs, i.e. from outside this process: they are validated, not trusted.
import { z } from 'zod'

const checkSchema = z.looseObject({
  id: z.string().min(1),
  stage: z.number().int().min(0),
  title: z.string(),
  passed: z.boolean(),
  status: z.enum(['pass', 'fail', 'timeout', 'error', 'skipped', 'not-judged']),
  points: z.number().int().min(0),
  maxPoints: z.number().int().min(0),
  message: z.string(),
})

export const gradeResultSchema = z
  .looseObject({
    stage: z.number().int().min(0),
    slug: z.string().min(1),
    seed: z.number().int(),
    passed: z.boolean(),
    score: z.number().int().min(0),
    maxScore: z.number().int().min(0),
    durationMs: z.number().min(0),
    rerun: z.string(),
    checks: z.array(checkSchema),
    /** Added by the CI template; a roster run knows these from the folder name and its clock. */
    learner: z.string().min(1).optional(),
    gradedAt: z.iso.datetime().optional(),
  })
  .superRefine((r, ctx) => {
    // The totals must be what the checks add up to, or the numbers cannot be trusted.
    const score = r.checks.reduce((sum, c) => sum + c.points, 0)
    const max = r.checks.reduce((sum, c) => sum + c.maxPoints, 0)
    if (score !== r.score || max !== r.maxScore)
      ctx.addIssue({ code: 'custom', message: `score ${r.score}/${r.maxScore} does not match its checks (${score}/${max})` })
    // A skipped check (a --server grade) is not a failure: passed, and worth 0 of 0. A check
    // left unjudged (another check fails for its precondition) is not passed, and earns nothing.
    const wrong = r.checks.find(
      (c) => c.points > c.maxPoints || c.passed !== (c.status === 'pass' || c.status === 'skipped') || (c.status === 'not-judged' && c.points !== 0),
    )
    if (wrong) ctx.addIssue({ code: 'custom', message: `check ${wrong.id} is inconsistent (points, passed and status disagree)` })
  })

export type GradeSummary = z.infer<typeof gradeResultSchema>
export type CheckSummary = GradeSummary['checks'][number]

/** Parses a result file's text; throws an Error naming what is wrong. */
export function parseGradeResult(text: string, where: string): GradeSummary {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new Error(`${where}: not JSON (${(error as Error).message})`)
  }
  if (json && typeof json === 'object' && 'runs' in json) throw new Error(`${where}: holds several runs (--repeat); grade once per result file`)
  const parsed = gradeResultSchema.safeParse(json)
  if (!parsed.success) throw new Error(`${where}: not a grade result: ${z.prettifyError(parsed.error)}`)
  return parsed.data
}
