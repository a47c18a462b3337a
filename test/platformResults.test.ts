// The autograder platforms' documents (grader/output/gradescope.ts,
// classroom50.ts), made from real v1 results: the score is the stage's own,
// each check is a test and a regression check is worth 0 of 0, the points add
// up, and a grade in which nothing was graded is one failed test that says
// why. `--format` writes them, and refuses a format it does not know.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { toClassroom50 } from '#grader/output/classroom50.ts'
import { toGradescope, type GradescopeResults } from '#grader/output/gradescope.ts'
import type { GradeResult } from '#grader/engine/gradeResult.ts'
import { checkoutWith } from './helpers/checkout.ts'
import { runCliDirectly } from './helpers/cli.ts'
import { gradeToJson } from './helpers/gradeJson.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('platform-results')
afterAll(() => scratch.disposeExpectingNoneLeft('processes left running by the CLI runs'))

const grade = (name: string, args: string[]) => gradeToJson<GradeResult>(scratch.path, name, args)
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

/** Real grades, made once: a passing stage 1 (with stage 0 as regression), a server that never starts, an answer refused as copied. */
const results: Record<'passing' | 'neverStarted' | 'refused', GradeResult> = {} as never
beforeAll(async () => {
  const broken = checkoutWith(scratch.path, 'syntax-error', 1, 'idempotency.ts', 'export const broken = = 1\n')
  const copied = checkoutWith(scratch.path, 'copied', 5, 'idempotency.ts', "export { createLayer } from '#solutions/05-scope-ttl/idempotency.ts'\n")
  const [passing, neverStarted, refused] = await Promise.all([
    grade('passing', ['1', '--solution', '--seed', '5']),
    grade('never-started', ['1', '--dir', broken, '--seed', '5']),
    grade('refused', ['5', '--dir', copied, '--seed', '5']),
  ])
  Object.assign(results, { passing: passing.result, neverStarted: neverStarted.result, refused: refused.result })
  expect([passing.code, neverStarted.code, refused.code], passing.stdout + passing.stderr).toEqual([0, 1, 1])
}, 120_000)

describe('Gradescope results.json', () => {
  it('the stage score on top, a test per check numbered stage.index, the verdict and the rerun line in output', () => {
    const r = results.passing
    const doc = toGradescope(r)
    expect(doc.score).toBe(r.score)
    expect(doc.score).toBe(stageByNumber(1).points)
    expect(doc.output).toContain(`PASSED  stage 1 score ${r.score}/${r.maxScore}`)
    expect(doc.output).toContain(`rerun: ${r.rerun}`)
    expect(doc.tests.map((t) => t.number)).toEqual([
      ...stageByNumber(1).checks.map((_, i) => `1.${i + 1}`),
      ...stageByNumber(0).checks.map((_, i) => `0.${i + 1}`),
    ])
    expect(doc.tests.map((t) => t.extra_data.check)).toEqual(r.checks.map((c) => c.id))
    expect(doc.tests.every((t) => t.extra_data.seed === r.seed && t.extra_data.digest)).toBe(true)
    expect(doc.extra_data).toMatchObject({ seed: r.seed, gradable: true, rerun: r.rerun, isolation: r.isolation })
    // The tests' points add up to the score: the regression ones count for nothing.
    expect(sum(doc.tests.map((t) => t.score))).toBe(doc.score)
    expect(sum(doc.tests.map((t) => t.max_score))).toBe(r.maxScore)
  })

  it('a regression check is an informational test: 0 of 0, tagged, its pass or failure still shown', () => {
    const doc = toGradescope(results.passing)
    const regression = doc.tests.filter((t) => t.tags.includes('regression'))
    expect(regression.map((t) => t.extra_data.check)).toEqual(stageByNumber(0).checks)
    for (const t of regression) expect(t).toMatchObject({ score: 0, max_score: 0, status: 'passed', tags: ['stage 0', 'regression'] })
    expect(doc.tests.filter((t) => !t.tags.includes('regression')).every((t) => t.max_score > 0 && t.tags.join() === 'stage 1')).toBe(true)
  })

  it('a failed check says what failed, what was expected and what came back', async () => {
    // The starter of stage 0 fails its query check: a real failure with its evidence.
    const { result } = await grade('starter-0', ['0', '--seed', '5'])
    const failed = toGradescope(result).tests.filter((t) => t.status === 'failed')
    expect(failed.length).toBeGreaterThan(0)
    for (const t of failed) expect(t.output).toMatch(/^(failed|timed out|could not run): /m)
    expect(failed.some((t) => /^expected: /m.test(t.output) && /^got: /m.test(t.output))).toBe(true)
  })

  it('a server that never started: one failed test with the reason, worth the stage, not one per check', () => {
    const r = results.neverStarted
    const doc = toGradescope(r)
    expect(r.checks.length).toBeGreaterThan(1)
    expect(doc.tests).toHaveLength(1)
    const [test] = doc.tests as [GradescopeResults['tests'][number]]
    expect(test).toMatchObject({ name: 'stage 1: the server did not start', score: 0, max_score: r.maxScore, status: 'failed' })
    expect(test.output).toContain(r.server.reason!)
    expect(test.output).toMatch(/idempotency\.ts:1:\d+: Unexpected "="/)
    expect(doc.score).toBe(0)
    expect(doc.output).toMatch(/^Nothing was graded/)
    expect(doc.extra_data.gradable).toBe(false)
  })

  it('an answer refused as copied: one failed test that says why', () => {
    const doc = toGradescope(results.refused)
    expect(doc.tests).toHaveLength(1)
    expect(doc.tests[0]!.name).toBe('stage 5: the answer was refused')
    expect(doc.tests[0]!.output).toContain('imports the reference solution')
  })
})

describe('Classroom 50 result.json', () => {
  it('integer points, a test per check, the tests adding up to the stage score, regression 0 of 0', () => {
    const r = results.passing
    const doc = toClassroom50(r)
    expect(doc).toMatchObject({ schema: 'classroom50/result/v1', score: r.score, 'max-score': r.maxScore })
    expect(doc['idem-lab']).toMatchObject({ schema: r.schema, seed: r.seed, gradable: true, rerun: r.rerun, isolation: r.isolation })
    const numbers = doc.tests.flatMap((t) => [t.score, t['max-score']])
    expect(numbers.every(Number.isInteger)).toBe(true)
    expect(sum(doc.tests.map((t) => t.score))).toBe(doc.score)
    expect(sum(doc.tests.map((t) => t['max-score']))).toBe(doc['max-score'])
    expect(new Set(doc.tests.map((t) => t['test-name'])).size).toBe(doc.tests.length)
    for (const t of doc.tests.filter((t) => t.regression))
      expect([t.score, t['max-score'], t['test-name']]).toEqual([0, 0, expect.stringMatching(/regression/)])
    expect(doc.tests.filter((t) => t.regression)).toHaveLength(stageByNumber(0).checks.length)
  })

  it('nothing graded (never started, or refused): one failed test with the reason, 0 of the stage', () => {
    for (const r of [results.neverStarted, results.refused]) {
      const doc = toClassroom50(r)
      expect(doc.tests).toEqual([expect.objectContaining({ passed: false, score: 0, 'max-score': r.maxScore })])
      expect(doc.tests[0]!.message).toContain(r.refused?.reason ?? r.server.reason!)
      expect([doc.score, doc['max-score'], doc['idem-lab'].gradable]).toEqual([0, r.maxScore, false])
    }
  })

  it('refuses fractional points rather than rounding them into a total that no longer matches', () => {
    const r = results.passing
    expect(() => toClassroom50({ ...r, score: r.score - 0.5 })).toThrow(/fractional points/)
  })
})

describe('--format', () => {
  it('writes the platform document where --json says', async () => {
    const { code, result } = await gradeToJson<GradescopeResults>(scratch.path, 'format', ['0', '--solution', '--seed', '5', '--format', 'gradescope'])
    expect(code).toBe(0)
    expect(result.score).toBe(stageByNumber(0).points)
    expect(result.tests.map((t) => t.number)).toEqual(stageByNumber(0).checks.map((_, i) => `0.${i + 1}`))
  })

  it('an unknown format, or one without --json: a usage error naming the formats, exit 2', async () => {
    const unknown = await runCliDirectly(['0', '--format', 'moodle', '--json', 'x.json'], scratch.path)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('--format moodle: not a format this grader writes. Formats: gradescope, classroom50')
    const alone = await runCliDirectly(['0', '--format', 'classroom50'], scratch.path)
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain('it needs --json')
  })
})
