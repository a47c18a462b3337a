// A bare `npm run grade` grades the first stage not yet passed: what the
// grader records of each full grade (.lab/progress.json, here a folder of the
// test's own), which grades count, and how the stage is picked from it.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { course, stageByNumber, type Stage } from '#harness/course.ts'
import { t } from '#harness/i18n/messages.ts'
import { LANGUAGES } from '#harness/i18n/stamp.ts'
import { repoRoot } from '#harness/paths.ts'
import { isUntouched } from '#harness/starterHashes.ts'
import { RESULT_SCHEMA } from '#grader/engine/gradeResult.ts'
import type { GradeResult } from '#grader/grade.ts'
import { firstUnpassed, pickLine } from '#grader/cli/firstUnpassed.ts'
import { type GradeKind, type Progress, readProgress, recordGrade, type Verdict } from '#grader/cli/progressRecord.ts'
import { runCliDirectly } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('first-unpassed')
afterAll(() => scratch.disposeExpectingNoneLeft())

let folders = 0
/** A .lab-like folder of its own, and the progress file in it. */
function labHome(): { home: string; file: string } {
  const home = join(scratch.path, `lab-${++folders}`)
  mkdirSync(home, { recursive: true })
  return { home, file: join(home, 'progress.json') }
}

const FULL: GradeKind = { source: { kind: 'starter' }, partial: false, server: false }

/** A grade of `stage` whose own checks all passed but `failing`, and whose regression checks failed as `regressionFailing` says. */
function gradeOf(stage: Stage, failing: string[] = [], opts: { ran?: string[]; regressionFailing?: boolean } = {}): GradeResult {
  const ran = opts.ran ?? stage.checks
  const own = ran.map((id) => ({ id, stage: stage.number, passed: !failing.includes(id), regression: false }))
  const earlier = course.stages
    .filter((s) => s.number < stage.number)
    .flatMap((s) => s.checks.map((id) => ({ id, stage: s.number, passed: !opts.regressionFailing, regression: true })))
  const checks = [...own, ...earlier].map((c) => ({
    ...c,
    title: c.id,
    status: c.passed ? 'pass' : 'fail',
    points: c.passed ? 5 : 0,
    maxPoints: 5,
    message: '',
    hint: '',
    notes: [],
    durationMs: 1,
    inputs: { draws: 0, digest: '' },
  })) as GradeResult['checks']
  return {
    schema: RESULT_SCHEMA,
    stage: stage.number,
    slug: stage.slug,
    seed: 7,
    gradable: true,
    server: { started: true, reason: null },
    refused: null,
    passed: checks.every((c) => c.passed),
    score: own.filter((c) => c.passed).length * 5,
    maxScore: stage.checks.length * 5,
    isolation: 'none',
    durationMs: 1,
    serverStartMs: 1,
    serverStarts: 1,
    rerun: `npm run grade -- ${stage.number} --seed 7`,
    checks,
  }
}

const [stage0, stage1, stage2] = [0, 1, 2].map(stageByNumber) as [Stage, Stage, Stage]
const verdict = (passed: boolean): Verdict => ({ passed, score: 0, maxScore: 0, seed: 1, at: '2026-01-01T00:00:00.000Z' })

describe('the progress record', () => {
  it("a full grade of stages/ records its stage's verdict: passed when every own check passed, regression failures aside", () => {
    const { file } = labHome()
    expect(readProgress(file)).toEqual({})
    const now = new Date('2026-03-04T05:06:07.000Z')
    expect(recordGrade(gradeOf(stage1, [], { regressionFailing: true }), FULL, file, now)).toBe(true)
    expect(readProgress(file)).toEqual({
      [stage1.slug]: { passed: true, score: stage1.checks.length * 5, maxScore: stage1.checks.length * 5, seed: 7, at: now.toISOString() },
    })
    expect(JSON.parse(readFileSync(file, 'utf8'))[stage1.slug].passed).toBe(true)
  })

  it('a failing own check, or a grade that stopped before all of them ran (watch), records a failure', () => {
    const { file } = labHome()
    recordGrade(gradeOf(stage0, ['suspected-duplicates']), FULL, file)
    expect(readProgress(file)[stage0.slug]!.passed).toBe(false)
    recordGrade(gradeOf(stage1, [], { ran: stage1.checks.slice(0, 3) }), FULL, file)
    expect(readProgress(file)[stage1.slug]!.passed).toBe(false)
  })

  it('the last verdict wins for its stage and leaves the others as they were', () => {
    const { file } = labHome()
    recordGrade(gradeOf(stage0), FULL, file)
    recordGrade(gradeOf(stage1), FULL, file)
    recordGrade(gradeOf(stage0, ['bank-basics']), FULL, file)
    const progress = readProgress(file)
    expect(Object.keys(progress).sort()).toEqual([stage0.slug, stage1.slug].sort())
    expect(progress[stage0.slug]!.passed).toBe(false)
    expect(progress[stage1.slug]!.passed).toBe(true)
  })

  it.for<[string, GradeKind]>([
    ['--only / --no-regression', { source: { kind: 'starter' }, partial: true, server: false }],
    ['--solution', { source: { kind: 'solution' }, partial: false, server: false }],
    ['--dir', { source: { kind: 'dir', path: '/elsewhere' }, partial: false, server: false }],
    ['--server', { source: { kind: 'starter' }, partial: false, server: true }],
  ])('%s records nothing', ([, kind]) => {
    const { file } = labHome()
    expect(recordGrade(gradeOf(stage0), kind, file)).toBe(false)
    expect(existsSync(file)).toBe(false)
  })

  it('a file it cannot read is as if nothing had been graded', () => {
    const { file } = labHome()
    writeFileSync(file, '{ not json')
    expect(readProgress(file)).toEqual({})
    writeFileSync(file, JSON.stringify({ [stage0.slug]: { passed: 'yes' } }))
    expect(readProgress(file)).toEqual({})
  })
})

describe('the first stage not yet passed', () => {
  const none = () => false

  it('is the first stage without a verdict, or whose last verdict failed, in the course order', () => {
    expect(firstUnpassed(course.stages, {}, none)).toEqual({ stage: stage0, why: 'ungraded' })
    const progress: Progress = { [stage0.slug]: verdict(true), [stage1.slug]: verdict(false), [stage2.slug]: verdict(true) }
    expect(firstUnpassed(course.stages, progress, none)).toEqual({ stage: stage1, why: 'failed' })
    // Order is the course's, not the record's: stage 2 passed does not skip stage 1.
    expect(firstUnpassed(course.stages, { [stage2.slug]: verdict(true) }, none)).toEqual({ stage: stage0, why: 'ungraded' })
  })

  it('a stage passed before but whose files are the starter again (npm run reset) is not passed', () => {
    const progress: Progress = { [stage0.slug]: verdict(true), [stage1.slug]: verdict(true) }
    expect(firstUnpassed(course.stages, progress, (s) => s.number === 1)).toEqual({ stage: stage1, why: 'starter' })
  })

  it('none once every stage passed', () => {
    const all = Object.fromEntries(course.stages.map((s) => [s.slug, verdict(true)]))
    expect(firstUnpassed(course.stages, all, none)).toBeUndefined()
  })

  it('the line says which stage and why, in the learner language', () => {
    expect(pickLine({ stage: stage2, why: 'ungraded' }, 'en')).toBe('stage 2 (fingerprint): the first stage not yet passed (no full grade of it yet)')
    expect(pickLine({ stage: stage2, why: 'failed' }, 'en')).toBe('stage 2 (fingerprint): the first stage not yet passed (its last full grade failed)')
    expect(pickLine(undefined, 'en')).toBe(t('en', 'pick.allPassed'))
    for (const lang of LANGUAGES) {
      const line = pickLine({ stage: stage2, why: 'failed' }, lang)
      expect(line).not.toBe(pickLine({ stage: stage2, why: 'failed' }, 'en'))
      expect(line).toContain('2')
      expect(line).toContain('fingerprint')
    }
  })
})

describe('npm run grade with no stage', () => {
  it('names the stage it picked first; a narrowed grade of it records nothing; a full one records its verdict', { timeout: 240_000 }, async () => {
    const { home, file } = labHome()
    const narrowed = await runCliDirectly(['--seed', '3', '--only', 'bank-basics'], home)
    expect(narrowed.stdout.split('\n')[0]).toBe('stage 0 (unprotected): the first stage not yet passed (no full grade of it yet)')
    expect(narrowed.stdout).toMatch(/Stage 0 · /)
    expect(existsSync(file)).toBe(false)

    const full = await runCliDirectly(['0', '--seed', '3'], home)
    expect([0, 1]).toContain(full.code)
    const recorded = readProgress(file)[stage0.slug]!
    expect(recorded.passed).toBe(full.code === 0)
    expect(full.stdout).toContain(`stage 0 score ${recorded.score}/${recorded.maxScore}`)
  })

  const untouched = course.stages.find((s) => isUntouched(s, repoRoot))
  it.skipIf(!untouched)('a record of every stage passed still picks the first stage whose files are the starter', { timeout: 120_000 }, async () => {
    const { home, file } = labHome()
    writeFileSync(file, JSON.stringify(Object.fromEntries(course.stages.map((s) => [s.slug, verdict(true)]))))
    const run = await runCliDirectly(['--only', untouched!.checks[0]!, '--seed', '3'], home)
    expect(run.stdout.split('\n')[0]).toBe(`stage ${untouched!.number} (${untouched!.slug}): the first stage not yet passed (its files are the starter again)`)
    expect(run.stdout).toContain(`Stage ${untouched!.number} · `)
  })
})
