// The platforms' own entry points, run as each platform runs them, on a
// stage 0 solution (cheap to grade): gradescope/run_autograder in a folder
// laid out as Gradescope's /autograder, and classroom50/autograder.py in a
// learner's checkout with the runner's environment. Each must leave the
// platform's document where the platform reads it, graded on a closed-book
// copy of the course, and a server that never starts must be one failed test.
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import type { Classroom50Result } from '#grader/output/classroom50.ts'
import type { GradescopeResults } from '#grader/output/gradescope.ts'
import { checkoutWith } from './helpers/checkout.ts'
import { closedBookCopy } from './helpers/courseCopy.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('autograders')
afterAll(() => scratch.disposeExpectingNoneLeft('processes left running by the autograders'))

const run = promisify(execFile)
const LIMIT_MS = 240_000
const stage0 = stageByNumber(0)
const solution0 = readFileSync(resolve(repoRoot, 'solutions', stage0.folder, 'suspectedDuplicates.ts'), 'utf8')
// TMPDIR: the servers a grade starts carry the scratch folder, so the afterAll sees any left running.
const env = (extra: Record<string, string>) => ({ ...process.env, TMPDIR: scratch.path, FORCE_COLOR: '0', ...extra })

let course: string
beforeAll(() => {
  course = closedBookCopy(join(scratch.path, 'course'))
  // As gradescope/build.sh writes it into the zip it builds for stage 0.
  writeFileSync(join(course, 'gradescope', 'stage'), '0\n')
})

describe.concurrent('Gradescope: run_autograder in an emulated /autograder', () => {
  /** A fresh /autograder: source/ the unpacked zip (the closed-book copy, built for stage 0), submission/ what the learner uploaded. */
  function autograderRoot(name: string, submission: (dir: string) => void): string {
    const root = join(scratch.path, name)
    mkdirSync(join(root, 'submission'), { recursive: true })
    symlinkSync(course, join(root, 'source'))
    submission(join(root, 'submission'))
    return root
  }
  /** Gradescope's run; `stage` overrides the zip's stage, as IDEM_LAB_STAGE does. */
  const grade = async (root: string, stage?: number) => {
    await run('bash', [join(root, 'source', 'gradescope', 'run_autograder')], {
      cwd: root,
      env: env({ AUTOGRADER_ROOT: root, ...(stage === undefined ? {} : { IDEM_LAB_STAGE: String(stage) }) }),
      timeout: LIMIT_MS,
    })
    return JSON.parse(readFileSync(join(root, 'results', 'results.json'), 'utf8')) as GradescopeResults
  }

  it('a solved stage 0, uploaded as a zip of the checkout: every check a passing test, the stage score', { timeout: LIMIT_MS }, async () => {
    const root = autograderRoot('gs-solved', (dir) => checkoutWith(dir, 'lab-alice', 0, 'suspectedDuplicates.ts', solution0))
    const results = await grade(root)
    expect(results.score).toBe(stage0.points)
    expect(results.tests.map((t) => [t.number, t.status])).toEqual(stage0.checks.map((_, i) => [`0.${i + 1}`, 'passed']))
    expect(results.output).toMatch(/^PASSED {2}stage 0 score 30\/30/)
  })

  it('a server that never starts: one failed test with the reason', { timeout: LIMIT_MS }, async () => {
    const root = autograderRoot('gs-broken', (dir) => checkoutWith(dir, '.', 1, 'idempotency.ts', 'export const broken = = 1\n'))
    const results = await grade(root, 1)
    expect(results.score).toBe(0)
    expect(results.tests).toEqual([
      expect.objectContaining({ name: 'stage 1: the server did not start', status: 'failed', max_score: stageByNumber(1).points }),
    ])
    expect(results.tests[0]!.output).toMatch(/idempotency\.ts:1:\d+: Unexpected "="/)
  })

  it('a submission without stages/: one failed test that says what to submit', { timeout: LIMIT_MS }, async () => {
    const root = autograderRoot('gs-empty', (dir) => writeFileSync(join(dir, 'answer.txt'), 'my query\n'))
    const results = await grade(root)
    expect(results.score).toBe(0)
    expect(results.tests).toEqual([expect.objectContaining({ name: 'stage 0: no stages/ folder in the submission', status: 'failed' })])
  })
})

describe('Gradescope: the autograder zip', () => {
  it('holds setup.sh and run_autograder at its root, the stage it grades, and no solutions/', { timeout: LIMIT_MS }, async () => {
    const zip = join(scratch.path, 'stage2.zip')
    const built = await run('bash', [join(repoRoot, 'gradescope', 'build.sh'), '2', zip], { cwd: scratch.path, env: env({}), timeout: LIMIT_MS })
    expect(built.stdout).toContain('stage 2, course at ')
    const listed = (await run('unzip', ['-Z1', zip])).stdout.split('\n')
    expect(listed).toEqual(expect.arrayContaining(['setup.sh', 'run_autograder', 'gradescope/stage', 'course.json', 'grader/cli/grade.ts']))
    expect(listed.filter((f) => f.startsWith('solutions/'))).toEqual([])
    expect((await run('unzip', ['-p', zip, 'gradescope/stage'])).stdout).toBe('2\n')
    // Gradescope runs run_autograder as an executable: the zip keeps its mode.
    expect((await run('unzip', ['-Z', zip, 'run_autograder'])).stdout).toMatch(/^-rwx/)
    const unknown = await run('bash', [join(repoRoot, 'gradescope', 'build.sh'), '9', zip], { env: env({}) }).catch((e) => e)
    expect([unknown.code, unknown.stderr]).toEqual([2, expect.stringContaining('no stage 9 in this course')])
  })
})

describe('Classroom 50: autograder.py in a learner checkout', () => {
  it('grades the pinned closed-book copy, and leaves a v1 result.json with the runner identity', { timeout: LIMIT_MS }, async () => {
    const bundle = join(scratch.path, 'bundle')
    mkdirSync(bundle)
    writeFileSync(join(bundle, 'idem-lab.json'), JSON.stringify({ path: course, stage: 0 }))
    const workspace = checkoutWith(scratch.path, 'lab-bob', 0, 'suspectedDuplicates.ts', solution0)
    const runner = {
      CLASSROOM50_BUNDLE_DIR: bundle,
      CLASSROOM: 'idem101',
      ASSIGNMENT: 'stage-0',
      SUBMISSION_TAG: 'submit/20261204T000000Z-abc1234',
      COMMIT_URL: 'https://github.com/idem101/lab-bob/commit/abc1234',
      RELEASE_URL: 'https://github.com/idem101/lab-bob/releases/tag/submit%2F20261204T000000Z-abc1234',
    }
    await run('python3', [join(course, 'classroom50', 'autograder.py')], { cwd: workspace, env: env(runner), timeout: LIMIT_MS })
    const result = JSON.parse(readFileSync(join(workspace, 'result.json'), 'utf8')) as Classroom50Result & Record<string, unknown>
    expect(result).toMatchObject({
      schema: 'classroom50/result/v1',
      classroom: 'idem101',
      assignment: 'stage-0',
      submission: runner.SUBMISSION_TAG,
      commit: runner.COMMIT_URL,
      review: runner.COMMIT_URL,
      score: stage0.points,
      'max-score': stage0.points,
    })
    expect(result.tests.map((t) => [t.check, t.passed, t.score])).toEqual(stage0.checks.map((id) => [id, true, expect.any(Number)]))
    // The learner's checkout graded with --dir, from the copy: its grader, not the submission's.
    expect(result['idem-lab'].rerun).toContain(`--dir ${workspace}`)
  })
})
