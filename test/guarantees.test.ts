// The guarantee matrix (docs/guarantees.md) against the checks and mutants the
// grader really has: every check is one row of its stage's table, every mutant
// sits in the row of the check it must fail, and every row has a property,
// boundary inputs, and a mutant or the reason it has none.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { course } from '#harness/course.ts'
import { mutants } from '#grader/mutants/index.ts'
import { repoRoot } from '#harness/paths.ts'

type Row = { stage: number; property: string; check: string; inputs: string; mutants: string[]; none?: string }

/** The rows of every `## Stage N` table. */
function parseMatrix(text: string): Row[] {
  const rows: Row[] = []
  let stage: number | undefined
  for (const line of text.split('\n')) {
    const heading = /^## Stage (\d+)\b/.exec(line)
    if (heading) stage = Number(heading[1])
    else if (line.startsWith('## ')) stage = undefined // a section after the stages' tables
    if (stage === undefined || !line.startsWith('|') || line.startsWith('|---') || line.startsWith('| property ')) continue
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim())
    if (cells.length !== 4) throw new Error(`a matrix row needs 4 cells: ${line}`)
    const [property, check, inputs, mutantCell] = cells as [string, string, string, string]
    const ids = (cell: string) => [...cell.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!)
    const [checkId, ...extra] = ids(check)
    if (!checkId || extra.length) throw new Error(`a matrix row names exactly one check: ${line}`)
    const none = /^none(: | yet$)/.test(mutantCell) ? mutantCell : undefined
    rows.push({ stage, property, check: checkId, inputs, mutants: none ? [] : ids(mutantCell), none })
  }
  return rows
}

const rows = parseMatrix(readFileSync(resolve(repoRoot, 'docs/guarantees.md'), 'utf8'))

describe('the guarantee matrix', () => {
  it.for(course.stages.map((s) => s.number))('stage %i: one row per check, in the order the grader runs them', (stage) => {
    expect(rows.filter((r) => r.stage === stage).map((r) => r.check)).toEqual(checksFor(stage).map((c) => c.id))
  })

  it('has no row for a stage the course does not have', () => {
    expect(rows.filter((r) => !course.stages.some((s) => s.number === r.stage))).toEqual([])
  })

  it('gives every row a property and the boundary inputs its check sends', () => {
    for (const r of rows) {
      expect(r.property.length, r.check).toBeGreaterThan(10)
      expect(r.inputs.length, r.check).toBeGreaterThan(5)
    }
  })

  it('puts every mutant in the row of the check it must fail, once, and names only real mutants', () => {
    const listed = rows.flatMap((r) => r.mutants.map((id) => ({ id, check: r.check, stage: r.stage })))
    expect(new Set(listed.map((l) => l.id)).size, 'a mutant listed twice').toBe(listed.length)
    expect(listed.map((l) => l.id).sort()).toEqual(mutants.map((m) => m.id).sort())
    for (const m of mutants) {
      const row = listed.find((l) => l.id === m.id)
      expect(row, m.id).toEqual({ id: m.id, check: m.mustFail, stage: expect.any(Number) })
      // In its own stage's table, or an earlier stage's: that stage's checks run on it as regression.
      expect(row!.stage, `${m.id} (stage ${m.stage}) sits in a later stage's table`).toBeLessThanOrEqual(m.stage)
    }
  })

  it("gives every property a mutant, except the bank's own (stage 0)", () => {
    const without = rows.filter((r) => r.mutants.length === 0)
    for (const r of without) expect(r.none, `${r.check} has no mutant and says nothing about it`).toBeDefined()
    const bank = without.filter((r) => r.none === 'none: the bank, not learner code')
    expect(
      bank.every((r) => r.stage === 0),
      'only stage 0 tests the bank itself',
    ).toBe(true)
    expect(
      without.filter((r) => !bank.includes(r)).map((r) => r.check),
      'properties still waiting for a mutant',
    ).toEqual([])
  })
})

describe('the time boundaries (docs/guarantees.md)', () => {
  const text = readFileSync(resolve(repoRoot, 'docs/guarantees.md'), 'utf8')
  const section = text.slice(text.indexOf('## Time boundaries'))
  const listed = [...section.matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]!)

  it('lists every check that moves the clock (timed), once each, and no other', () => {
    const timed = course.stages.flatMap((s) =>
      checksFor(s.number)
        .filter((c) => c.timed)
        .map((c) => c.id),
    )
    expect(new Set(listed).size, 'a check listed twice').toBe(listed.length)
    expect([...listed].sort()).toEqual([...timed].sort())
  })
})
