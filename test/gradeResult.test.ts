// The result contract (docs/grade-result.md): what `--json` writes is valid
// against docs/grade-result.schema.json, its score is the stage's own checks'
// and the printed summary says the same number, and a grade in which nothing
// was graded (a server that never started, an answer refused as copied) says
// so instead of passing for a graded 0.
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { maxScoreOfGrade } from '#grader/checks/index.ts'
import { RESULT_SCHEMA, type GradeResult } from '#grader/engine/gradeResult.ts'
import { checkoutWith } from './helpers/checkout.ts'
import { gradeToJson as gradeAsJson } from './helpers/gradeJson.ts'
import { runCliDirectly } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('grade-result')
afterAll(() => scratch.disposeExpectingNoneLeft('processes left running by the CLI runs'))

const schema = JSON.parse(readFileSync(resolve(repoRoot, 'docs', 'grade-result.schema.json'), 'utf8'))
// Formats (gradedAt's date-time) are documentation here: the contract's test is the shape.
const validate = new Ajv2020({ allErrors: true, validateFormats: false }).compile(schema)

const gradeToJson = (name: string, args: string[]) => gradeAsJson<GradeResult>(scratch.path, name, args)

const checkout = (name: string, stage: number, file: string, text: string) => checkoutWith(scratch.path, name, stage, file, text)

/** The result without its isolation level, which every result must state. */
const unisolated = ({ isolation: _, ...rest }: Record<string, unknown>) => rest
const expectValid = (result: unknown) => expect(validate(result) ? [] : validate.errors).toEqual([])

describe.concurrent('the --json result contract', () => {
  it('a real grade is valid against the schema, gradable, and scored as the summary prints it', async () => {
    const stage0 = stageByNumber(0)
    const { code, stdout, stderr, result } = await gradeToJson('solution-0', ['0', '--solution', '--seed', '5'])
    expect(code, stdout + stderr).toBe(0)
    expectValid(result)
    expect(result).toMatchObject({
      schema: RESULT_SCHEMA,
      gradable: true,
      server: { started: true, reason: null },
      refused: null,
      score: stage0.points,
      maxScore: stage0.points,
    })
    expect(stdout).toContain(`PASSED  stage 0 score ${result.score}/${result.maxScore}`)
    // The schema refuses what breaks the contract: the test above could fail.
    const { schema: _, ...unversioned } = result
    for (const broken of [
      unversioned,
      { ...result, gradable: true, refused: { reason: 'copied' } },
      { ...result, gradable: true, server: { started: false, reason: 'did not start' } },
      { ...result, checks: result.checks.map(({ regression: _, ...check }) => check) },
      { ...result, total: result.score },
      unisolated(result),
      { ...result, isolation: 'root' },
    ])
      expect(validate(broken), JSON.stringify(broken).slice(0, 200)).toBe(false)
  })

  it('a server that never starts: not gradable, the reason given, and the score counts the stage only', async () => {
    const stage1 = stageByNumber(1)
    const dir = checkout('syntax-error', 1, 'idempotency.ts', 'export const broken = = 1\n')
    const { code, stdout, stderr, result } = await gradeToJson('syntax-error', ['1', '--dir', dir, '--seed', '5'])
    expect(code, stdout + stderr).toBe(1)
    expectValid(result)
    expect(result.gradable).toBe(false)
    expect(result.server.started).toBe(false)
    expect(result.server.reason).toMatch(/^the server did not start: .*idempotency\.ts:1:\d+: Unexpected "="$/)
    expect(result.refused).toBeNull()
    // Stage 0's checks ran as regression: listed and marked, outside the score.
    expect(result.checks.filter((c) => c.regression).map((c) => c.id)).toEqual(stageByNumber(0).checks)
    expect(result.checks.filter((c) => !c.regression).map((c) => c.id)).toEqual(stage1.checks)
    expect([result.score, result.maxScore]).toEqual([0, maxScoreOfGrade(stage1)])
    expect(result.maxScore).toBe(stage1.points)
    // The terminal says nothing was graded, not a score that reads as a verdict on the code.
    expect(stdout).toMatch(/^NOT GRADED {2}stage 1 · the server did not start, so no check judged your code: the 0 is no verdict on it · \d+\.\d s$/m)
    expect(stdout).not.toContain('FAILED')
    expect(stdout).not.toContain(`score 0/${stage1.points}`)
    expect(stdout).not.toContain("earlier stages' checks")
  })

  it('grade -- all: each stage a valid result, and its table, its summary and its --json show one score', async () => {
    // A checkout whose stage 1 is solved and every other stage still the starters: only stage 1 is graded, with stage 0 as regression.
    const stage1 = stageByNumber(1)
    const dir = join(scratch.path, 'all')
    for (const file of stage1.edits) checkoutWith(scratch.path, 'all', 1, file, readFileSync(resolve(repoRoot, 'solutions', stage1.folder, file), 'utf8'))
    const file = join(scratch.path, 'all.json')
    const { code, stdout, stderr } = await runCliDirectly(['all', '--dir', dir, '--seed', '5', '--json', file], scratch.path)
    expect(code, stdout + stderr).toBe(1) // the other stages are not passed
    const all = JSON.parse(readFileSync(file, 'utf8')) as { stages: GradeResult[]; progress: Array<{ stage: number; score: number; maxScore: number }> }
    for (const result of all.stages) expectValid(result)
    const graded = all.stages.find((r) => r.stage === 1)!
    expect(graded).toMatchObject({ gradable: true, score: stage1.points, maxScore: stage1.points })
    // Stage 0's query is the checkout's starter, which a regression check calls: it fails there, outside the score.
    const regression = graded.checks.filter((c) => c.regression)
    const regressionPassed = regression.filter((c) => c.status === 'pass').length
    expect(regressionPassed).toBeLessThan(regression.length)
    expect(graded.passed).toBe(false)
    for (const result of all.stages.filter((r) => r.stage !== 1)) expect(result).toMatchObject({ gradable: false, server: { started: false } })
    expect(all.progress.map((p) => [p.score, p.maxScore])).toEqual(all.stages.map((r) => [r.score, r.maxScore]))
    expect(stdout).toContain(`FAILED  stage 1 score ${graded.score}/${graded.maxScore}`)
    expect(stdout).toContain(`earlier stages' checks (regression, not in the score): ${regressionPassed} of ${regression.length} passed`)
    expect(stdout).toMatch(new RegExp(`stage 1 .* ${graded.score}/${graded.maxScore}  passed  regression failing: `))
  })

  it('an answer refused as copied: not gradable, with the reason, and no server started', async () => {
    const dir = checkout('copied', 5, 'idempotency.ts', "// TODO\nexport { createLayer } from '#solutions/05-scope-ttl/idempotency.ts'\n")
    const { code, stdout, stderr, result } = await gradeToJson('copied', ['5', '--dir', dir, '--seed', '5'])
    expect(code, stdout + stderr).toBe(1)
    expectValid(result)
    expect(result.gradable).toBe(false)
    expect(result.refused?.reason).toContain('stages/05-scope-ttl/idempotency.ts imports the reference solution')
    expect(result.server).toEqual({ started: false, reason: 'not started: the graded folder was refused' })
    expect(result.score).toBe(0)
  })
})
