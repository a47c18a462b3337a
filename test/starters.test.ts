// "Not started" means: the stage's learner files are byte for byte the
// course's starters. The hash list the grader compares with is generated from
// stages/ and must stay current.
import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { course } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { isUntouched, STARTER_HASHES, starterHashList } from '#harness/starterHashes.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('starters')
afterAll(() => scratch.dispose())

function copyOfStages(name: string): string {
  const dir = join(scratch.path, name)
  cpSync(resolve(repoRoot, 'stages'), join(dir, 'stages'), { recursive: true })
  return dir
}

describe('starter detection', () => {
  it('grader/policing/starters.sha256 is the hash list of stages/ as it is (else: npm run starters:hash)', () => {
    expect(readFileSync(STARTER_HASHES, 'utf8'), 'run npm run starters:hash').toBe(starterHashList())
  })

  it('an untouched copy is not started at every stage, and a checkout without a stage has not started it', () => {
    const dir = copyOfStages('untouched')
    for (const s of course.stages) expect(isUntouched(s, dir), s.folder).toBe(true)
    rmSync(join(dir, 'stages', course.stages[3]!.folder), { recursive: true })
    expect(isUntouched(course.stages[3]!, dir)).toBe(true)
  })

  it('one changed byte in one learner file starts that stage only; line endings alone do not', () => {
    const dir = copyOfStages('edited')
    const stage = course.stages[2]!
    appendFileSync(join(dir, 'stages', stage.folder, stage.edits[0]!), ' ')
    for (const s of course.stages) expect(isUntouched(s, dir), s.folder).toBe(s !== stage)

    const crlf = copyOfStages('crlf')
    const file = join(crlf, 'stages', stage.folder, stage.edits[0]!)
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('\n', '\r\n'))
    expect(isUntouched(stage, crlf)).toBe(true)
  })

  it('a solved stage is started', () => {
    const dir = copyOfStages('solved')
    const stage = course.stages[1]!
    cpSync(resolve(repoRoot, 'solutions', stage.folder), join(dir, 'stages', stage.folder), { recursive: true })
    expect(isUntouched(stage, dir)).toBe(false)
  })
})
