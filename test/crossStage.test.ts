// With --dir, a regression check that calls another stage's learner file (here
// stage 2's canonicalize, from a stage-5 grade) uses the checkout's own file
// when it has one, and otherwise says which file stood in for it.
import { cpSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { gradeIn, scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('cross-stage')
afterAll(() => scratch.dispose())

/** A checkout holding the solved folders of these stages only. */
function checkout(name: string, stages: number[]): string {
  const dir = join(scratch.path, name)
  for (const n of stages) {
    const { folder } = stageByNumber(n)
    mkdirSync(join(dir, 'stages'), { recursive: true })
    cpSync(resolve(repoRoot, 'solutions', folder), join(dir, 'stages', folder), { recursive: true })
  }
  return dir
}

const only = ['canonicalize-rfc8785']

describe("a check that calls another stage's learner file", () => {
  it("uses the checkout's own file when it has one", async () => {
    const r = await gradeIn(scratch.path, { stage: 5, seed: 2, only, source: { kind: 'dir', path: checkout('both', [2, 5]) } })
    expect(r.checks.map((c) => [c.id, c.passed, c.notes.filter((n) => String(n).includes('stood in'))])).toEqual([[only[0], true, []]])
  })

  it("says, when the checkout lacks it, that this course's starter stood in", async () => {
    const path = checkout('only5', [5])
    const r = await gradeIn(scratch.path, { stage: 5, seed: 2, only, source: { kind: 'dir', path } })
    const [check] = r.checks
    expect(check!.passed, 'the starter canonicalize fails').toBe(false)
    expect(String(check!.message)).toContain(`${path} has no stages/02-fingerprint/canonicalize.ts: this course's starter stood in for it`)
  })
})
