// A closed-book class gets the course without solutions/. Every stage must
// still run and grade there: the earlier layers come from given/ and bank/.
import { execFileSync, spawn } from 'node:child_process'
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { course } from '#harness/course.ts'
import type { GradeAllResult } from '#grader/cli/gradeAll.ts'
import { repoRoot } from '#harness/paths.ts'
import { inEnglish } from '../helpers/cli.ts'
import { scratchDir } from '../helpers/scratch.ts'

const scratch = scratchDir('closed-book')
afterAll(() => scratch.dispose())

/** The tracked files of this checkout, as they are now, without solutions/; node_modules linked. */
function cloneWithoutSolutions(): string {
  const clone = join(scratch.path, 'course')
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean)
  for (const file of tracked.filter((f) => !f.startsWith('solutions/') && existsSync(resolve(repoRoot, f)))) {
    mkdirSync(dirname(join(clone, file)), { recursive: true })
    cpSync(resolve(repoRoot, file), join(clone, file))
  }
  symlinkSync(realpathSync(resolve(repoRoot, 'node_modules')), join(clone, 'node_modules'))
  return clone
}

/** `npm run grade -- all --seed 3 --json` in `clone`: its exit code, its output and its JSON. */
async function gradeAllIn(clone: string, name: string): Promise<{ out: string; result: GradeAllResult }> {
  const json = join(scratch.path, `${name}.json`)
  const { code, out } = await new Promise<{ code: number | null; out: string }>((done) => {
    const child = spawn(process.execPath, ['harness/launch.mjs', 'grader/cli/grade.ts', 'all', '--seed', '3', '--json', json], {
      cwd: clone,
      // Its own .lab/ is the clone's; the locale could still choose another language than the English this test reads.
      env: { ...process.env, TMPDIR: scratch.path, FORCE_COLOR: '0', ...inEnglish() },
    })
    let text = ''
    child.stdout.on('data', (c: Buffer) => (text += c))
    child.stderr.on('data', (c: Buffer) => (text += c))
    child.on('close', (c) => done({ code: c, out: text }))
  })
  expect(code, `1 = graded and failing; 2 would be the grader failing\n${out}`).toBe(1)
  return { out, result: JSON.parse(readFileSync(json, 'utf8')) as GradeAllResult }
}

describe('a clone without solutions/', () => {
  it(
    'npm run grade -- all: untouched starters are "not started" without a check run; begun ones grade, fail, and nothing crashes',
    async () => {
      const clone = cloneWithoutSolutions()
      expect(existsSync(join(clone, 'solutions'))).toBe(false)

      // Every stage is the untouched starter: said at once, no server started, no regression run.
      const untouched = await gradeAllIn(clone, 'untouched')
      expect(untouched.result.stages.map((s) => s.stage)).toEqual(course.stages.map((s) => s.number))
      for (const stage of untouched.result.stages) {
        expect(stage.checks, `stage ${stage.stage} is an untouched starter: no check runs`).toEqual([])
        expect(stage.notStarted, `stage ${stage.stage}`).toBe(true)
        expect(stage.passed, `stage ${stage.stage}`).toBe(false)
        expect(stage.maxScore, `stage ${stage.stage}: the table still shows what the stage is worth`).toBeGreaterThan(0)
      }
      expect(untouched.result.progress.map((p) => p.state)).toEqual(course.stages.map(() => 'not started'))
      expect(untouched.out).not.toMatch(/PASSED|FAILED/)
      expect(untouched.out).toContain('next: stage 0')

      // A learner who has begun every stage (one comment added): each starter grades there, and fails.
      for (const stage of course.stages) for (const file of stage.edits) appendFileSync(join(clone, 'stages', stage.folder, file), '\n// begun\n')
      const begun = await gradeAllIn(clone, 'begun')
      expect(begun.result.stages.map((s) => s.stage)).toEqual(course.stages.map((s) => s.number))
      for (const graded of begun.result.stages) {
        expect(graded.notStarted, `stage ${graded.stage}`).toBeUndefined()
        expect(graded.checks.length, `stage ${graded.stage}`).toBeGreaterThan(0)
        expect(graded.passed, `stage ${graded.stage}'s starter`).toBe(false)
        for (const c of graded.checks)
          expect(c.message, `stage ${graded.stage} ${c.id}`).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module|before it listened|solutions\//)
      }
      expect(begun.result.progress.map((p) => p.state)).toEqual(course.stages.map(() => 'failed'))
      // The table's maximum is the same whether the stage ran or not.
      expect(begun.result.progress.map((p) => p.maxScore)).toEqual(untouched.result.progress.map((p) => p.maxScore))
      expect(begun.out).toContain('next: stage 0')
    },
    30 * 60_000,
  )
})
