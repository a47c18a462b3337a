// The course manifest (course.json) against what is really there: the stage
// folders, their solutions, the graders' check lists and the mutants. Reads
// everything dynamically, so it keeps holding as stages are added.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { course, findStage } from '#harness/course.ts'
import { mutants } from '#grader/mutants/index.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { repoRoot } from '#harness/paths.ts'

const stagesRoot = resolve(repoRoot, 'stages')
const solutionsRoot = resolve(repoRoot, 'solutions')
const folders = (root: string) =>
  readdirSync(root)
    .filter((f) => statSync(join(root, f)).isDirectory())
    .sort()

/** Every .ts file under `dir`, relative to it. */
function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && statSync(join(dir, f)).isFile())
    .map((f) => relative(dir, join(dir, f)))
    .sort()
}

const stages = course.stages

describe('course.json', () => {
  it('numbers its stages 0..N in order, each in a folder named NN-slug, with unique slugs', () => {
    expect(stages.length).toBeGreaterThan(0)
    expect(stages.map((s) => s.number)).toEqual(stages.map((_, i) => i))
    for (const s of stages) expect(s.folder).toBe(`${String(s.number).padStart(2, '0')}-${s.slug}`)
    expect(new Set(stages.map((s) => s.slug)).size).toBe(stages.length)
    for (const s of stages) expect(s.slug, `stage ${s.number}`).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
  })

  it('lists exactly the folders of stages/ and of solutions/', () => {
    const listed = stages.map((s) => s.folder).sort()
    expect(folders(stagesRoot), 'stages/').toEqual(listed)
    expect(folders(solutionsRoot), 'solutions/').toEqual(listed)
  })

  it('gives every stage a title, a summary, hints and at least one learner file', () => {
    for (const s of stages) {
      expect(s.title.trim(), `stage ${s.number} title`).not.toBe('')
      expect(s.summary.trim(), `stage ${s.number} summary`).not.toBe('')
      expect(s.edits.length, `stage ${s.number} edits`).toBeGreaterThan(0)
      expect(s.hints.length, `stage ${s.number} hints`).toBeGreaterThan(0)
      for (const h of s.hints) expect(h.trim(), `stage ${s.number} hint`).not.toBe('')
    }
  })

  it('lets the grader find each stage by number, stageN, slug and folder', () => {
    for (const s of stages) for (const name of [String(s.number), `stage${s.number}`, s.slug, s.folder]) expect(findStage(name).number, name).toBe(s.number)
  })
})

describe.for(stages)('stage $number ($slug)', (stage) => {
  const starter = join(stagesRoot, stage.folder)
  const solution = join(solutionsRoot, stage.folder)

  it('solutions/ mirrors stages/ path for path (.ts files)', () => {
    expect(tsFiles(solution)).toEqual(tsFiles(starter))
  })

  it("every learner file exists in both, and the starter's copy has a // TODO", () => {
    for (const file of stage.edits) {
      expect(existsSync(join(solution, file)), `solutions/${stage.folder}/${file}`).toBe(true)
      expect(existsSync(join(starter, file)), `stages/${stage.folder}/${file}`).toBe(true)
      expect(readFileSync(join(starter, file), 'utf8'), `stages/${stage.folder}/${file}`).toContain('// TODO')
    }
  })

  it('files the learner does not edit are the same in stages/ and solutions/ (--dir takes only the learner files)', () => {
    for (const file of tsFiles(starter).filter((f) => !stage.edits.includes(f)))
      expect(readFileSync(join(starter, file), 'utf8'), file).toBe(readFileSync(join(solution, file), 'utf8'))
  })

  it('the starter exports the same names as the solution, so the grader can call either', async () => {
    for (const file of stage.edits) {
      for (const root of [starter, solution]) expect(existsSync(join(root, file)), join(root, file)).toBe(true)
      const names = async (root: string) => Object.keys(await import(pathToFileURL(join(root, file)).href)).sort()
      expect(await names(starter), file).toEqual(await names(solution))
    }
  })

  it('lists its checks in the order the grader runs them, and its points are their sum', () => {
    const checks = checksFor(stage.number)
    expect(checks.length, 'a stage without checks cannot be graded').toBeGreaterThan(0)
    expect(stage.checks).toEqual(checks.map((c) => c.id))
    expect(stage.points).toBe(checks.reduce((sum, c) => sum + c.points, 0))
  })

  it('has well-formed checks with unique ids', () => {
    const checks = checksFor(stage.number)
    expect(new Set(checks.map((c) => c.id)).size).toBe(checks.length)
    for (const c of checks) {
      expect(c.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/)
      expect(c.title.trim(), c.id).not.toBe('')
      expect(c.hint.trim(), c.id).not.toBe('')
      expect(Number.isInteger(c.points) && c.points > 0, `${c.id} points`).toBe(true)
      // At most 4 minutes: stage 6's histories (PostgreSQL, three instances, restarts) took 97 s at load average 21.
      expect(Number.isInteger(c.timeoutMs) && c.timeoutMs > 0 && c.timeoutMs <= 240_000, `${c.id} timeoutMs`).toBe(true)
      expect(typeof c.run, c.id).toBe('function')
    }
  })
})

it('no checks are registered for a stage the course does not have', () => {
  expect(checksFor(stages.length)).toEqual([])
  expect(checksFor(-1)).toEqual([])
})

describe('mutants', () => {
  it('have unique ids', () => {
    expect(new Set(mutants.map((m) => m.id)).size).toBe(mutants.length)
  })

  it.for(mutants)('$id names a real stage and one of its checks, and materializes', (m) => {
    const stage = stages.find((s) => s.number === m.stage)
    expect(stage, `stage ${m.stage}`).toBeDefined()
    // A check of its own stage, or of an earlier one: those run on it too, as regression.
    expect(stages.filter((s) => s.number <= m.stage).flatMap((s) => checksFor(s.number).map((c) => c.id))).toContain(m.mustFail)
    expect(m.title.trim()).not.toBe('')
    expect(m.edits.length).toBeGreaterThan(0)
    for (const e of m.edits) expect(stage!.edits, `${e.file} is a learner file`).toContain(e.file)
    // materialize() throws unless each edit's text occurs exactly once.
    const checkout = materialize(m)
    for (const file of new Set(m.edits.map((e) => e.file))) {
      const mutated = readFileSync(join(checkout, 'stages', stage!.folder, file), 'utf8')
      const original = readFileSync(join(solutionsRoot, stage!.folder, file), 'utf8')
      expect(mutated, `${m.id} changes ${file}`).not.toBe(original)
      for (const e of m.edits.filter((x) => x.file === file)) expect(mutated).toContain(e.replace)
    }
  })
})
