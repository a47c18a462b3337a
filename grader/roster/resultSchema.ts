// The shape of a grade result file (`npm run grade -- N --json FILE`), as the
// results store takes it in: the contract of #grader/engine/gradeResult.ts,
// whose JSON Schema is docs/grade-result.schema.json. Result files come from
// grader children and from CI runs, i.e. from outside this process: they are
// validated, not trusted.
import { z } from 'zod'
import { isRegression, RESULT_SCHEMA, stageScore } from '#grader/engine/gradeResult.ts'

const checkSchema = z.looseObject({
  id: z.string().min(1),
  stage: z.number().int().min(0),
  title: z.string(),
  passed: z.boolean(),
  status: z.enum(['pass', 'fail', 'timeout', 'error', 'skipped', 'not-judged']),
  points: z.number().int().min(0),
  maxPoints: z.number().int().min(0),
  message: z.string(),
  regression: z.boolean(),
})

export const gradeResultSchema = z
  .looseObject({
    schema: z.literal(RESULT_SCHEMA),
    stage: z.number().int().min(0),
    slug: z.string().min(1),
    seed: z.number().int(),
    gradable: z.boolean(),
    server: z.object({ started: z.boolean().nullable(), reason: z.string().nullable() }),
    refused: z.object({ reason: z.string().min(1) }).nullable(),
    passed: z.boolean(),
    score: z.number().int().min(0),
    maxScore: z.number().int().min(0),
    isolation: z.enum(['bwrap', 'user', 'none']),
    durationMs: z.number().min(0),
    rerun: z.string(),
    checks: z.array(checkSchema),
    /** Added by the CI template; a roster run knows these from the folder name and its clock. */
    learner: z.string().min(1).optional(),
    gradedAt: z.iso.datetime().optional(),
  })
  .superRefine((r, ctx) => {
    // The totals must be what the stage's own checks add up to, or the numbers cannot be trusted.
    const { score, maxScore } = stageScore(r.stage, r.checks)
    if (score !== r.score || maxScore !== r.maxScore)
      ctx.addIssue({ code: 'custom', message: `score ${r.score}/${r.maxScore} does not match its checks (${score}/${maxScore})` })
    const misplaced = r.checks.find((c) => c.regression !== isRegression(c, r.stage))
    if (misplaced) ctx.addIssue({ code: 'custom', message: `check ${misplaced.id} of stage ${misplaced.stage} is marked regression: ${misplaced.regression}` })
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
  // Its score counted regression checks too: read as this contract's, it would be another number under the same name.
  if (json && typeof json === 'object' && !('schema' in json))
    throw new Error(`${where}: written by a grader older than the result contract (no "schema"); grade it again to import it`)
  const parsed = gradeResultSchema.safeParse(json)
  if (!parsed.success) throw new Error(`${where}: not a grade result: ${z.prettifyError(parsed.error)}`)
  return parsed.data
}
