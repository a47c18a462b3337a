// The command line, run as a learner runs it: one seed reproduces a run (same
// checks, same random inputs), and the exit code says what happened.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import type { GradeResult } from '#grader/grade.ts'
import { runCliDirectly, runGradeCli } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'
import { stable } from './helpers/stableResult.ts'

const scratch = scratchDir('cli')
const stage0 = stageByNumber(0)
const json = (name: string) => join(scratch.path, name)
const read = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as GradeResult

afterAll(() => scratch.disposeExpectingNoneLeft('processes left running by the CLI runs'))

describe.concurrent('one seed, one run', () => {
  it('--seed 7 twice gives the same checks and the same random inputs; --seed 8 draws others; --repeat 2 runs both', async ({ expect }) => {
    const [a, b, c, repeated] = await Promise.all([
      runGradeCli(['0', '--solution', '--seed', '7', '--json', json('a.json')], scratch.path),
      runGradeCli(['0', '--solution', '--seed', '7', '--json', json('b.json')], scratch.path),
      runGradeCli(['0', '--solution', '--seed', '8', '--json', json('c.json')], scratch.path),
      runGradeCli(['stage0', '--solution', '--seed', '7', '--repeat', '2', '--json', json('repeat.json')], scratch.path),
    ])
    for (const run of [a, b, c, repeated]) expect(run.code, run.stdout + run.stderr).toBe(0)
    const [first, second, other] = [read(json('a.json')), read(json('b.json')), read(json('c.json'))]
    expect(stable(second)).toEqual(stable(first))
    // The JSON the issue specifies.
    expect(first).toMatchObject({ stage: 0, seed: 7, passed: true, score: stage0.points, maxScore: stage0.points })
    expect(first.checks.map((x) => x.id)).toEqual(stage0.checks)
    for (const check of first.checks) {
      expect(Object.keys(check)).toEqual(expect.arrayContaining(['id', 'stage', 'title', 'passed', 'points', 'message']))
      expect(check.inputs.draws, check.id).toBeGreaterThan(0)
    }
    // A different seed draws different inputs for every check.
    expect(other.checks.map((x) => x.id)).toEqual(stage0.checks)
    other.checks.forEach((x, i) => expect(x.inputs.digest, x.id).not.toBe(first.checks[i]!.inputs.digest))
    // --repeat 2 from seed 7 is the seed 7 run, then the seed 8 run.
    const runs = JSON.parse(readFileSync(json('repeat.json'), 'utf8')) as { runs: GradeResult[]; passed: boolean }
    expect(runs.passed).toBe(true)
    expect(runs.runs.map(stable)).toEqual([stable(first), stable(other)])
    expect(repeated.stdout).toContain('2/2 runs passed')
    // The terminal shows a ✓ per check, the seed and the rerun command.
    expect(a.stdout.match(/✓/g)?.length).toBe(stage0.checks.length)
    expect(a.stdout).toContain('seed 7')
    expect(a.stdout).toContain('PASSED')
    expect(a.stdout).toContain('rerun: npm run grade -- 0 --seed 7 --solution')
  })
})

describe.concurrent('exit codes', () => {
  it('1 when a check fails, with the failed check, a hint, the seed and the rerun command (0 is above)', async ({ expect }) => {
    const starter = await runGradeCli(['unprotected', '--seed', '11', '--json', json('starter.json')], scratch.path)
    expect(starter.code, starter.stdout + starter.stderr).toBe(1)
    expect(starter.stdout).toMatch(/✗ .*\[suspected-duplicates\]/)
    expect(starter.stdout).toContain('FAILED')
    expect(starter.stdout).toContain('hint: ')
    expect(starter.stdout).toContain('rerun: npm run grade -- 0 --seed 11')
    const result = read(json('starter.json'))
    expect(result.checks.filter((c) => !c.passed).map((c) => c.id)).toEqual(['suspected-duplicates'])
  })

  // An unknown option, for every command: cliUsage.test.ts.
  const usage: Array<[string, string[], RegExp]> = [
    ['an unknown stage number', ['99'], /unknown stage "99"/],
    ["no stage with --dir (a bare grade is the learner's own stages/ only)", ['--dir', '.'], /usage: npm run grade/],
    ['a seed that is not a number', ['0', '--seed', 'abc'], /--seed takes a whole number/],
    ['--solution with --dir', ['0', '--solution', '--dir', '.'], /exclude each other/],
    ['a --dir that does not exist', ['0', '--dir', '/nonexistent/checkout', '--seed', '1'], /nonexistent\/checkout/],
  ]
  it.concurrent.for(usage)('2 for %s', async ([, args, says], { expect }) => {
    const run = await runCliDirectly(args, scratch.path)
    expect(run.code, run.stdout + run.stderr).toBe(2)
    expect(run.stdout + run.stderr).toMatch(says)
    expect(run.stdout).not.toContain('PASSED')
  })

  it('0 for --help', async ({ expect }) => {
    const run = await runCliDirectly(['--help'], scratch.path)
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/usage: npm run grade/)
  })
})
