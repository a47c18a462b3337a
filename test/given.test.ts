// given/ holds the pieces a stage receives already solved. Each must stay the
// reference solution it was copied from (named in its first line), and may
// itself use only the bank and the given pieces of earlier stages.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { findCopiedAnswers, givenStage } from '#grader/policing/copiedAnswers.ts'
import { course } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'

const givenRoot = resolve(repoRoot, 'given')
const givenFiles = readdirSync(givenRoot, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => join(givenRoot, f))

/** The solution file a given piece comes from, as its header names it. */
function sourceOf(file: string): string {
  const named = /^\/\/ Given to stage \d+ on, solved: .* of (solutions\/\S+\.ts)\./.exec(readFileSync(file, 'utf8'))?.[1]
  if (!named) throw new Error(`${relative(repoRoot, file)}: its first line must name the solution file it comes from`)
  return resolve(repoRoot, named)
}

/** Top-level statements other than imports, by the name they declare, as source text. */
function declarations(file: string): Map<string, string> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
  const out = new Map<string, string>()
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) continue
    const names = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((d) => d.name.getText(source))
      : [(statement as ts.DeclarationStatement).name?.getText(source) ?? statement.getText(source)]
    for (const name of names) out.set(name, statement.getText(source))
  }
  return out
}

/** What differs between a given piece and its solution: one line per declaration, naming both files. */
function differences(given: string, solution: string): string[] {
  const theirs = declarations(solution)
  return [...declarations(given)].flatMap(([name, text]) =>
    theirs.get(name) === text
      ? []
      : [`${relative(repoRoot, given)}: ${name} is not the same as in ${relative(repoRoot, solution)}${theirs.has(name) ? '' : ' (not found there)'}`],
  )
}

describe('given/', () => {
  it('has a piece for every stage that hands one on (stage 1 to 4), and nothing for the last stage', () => {
    const stages = new Set(givenFiles.map((f) => givenStage(f)))
    expect([...stages].sort()).toEqual([1, 2, 3, 4])
    expect(stages.has(course.stages.at(-1)!.number), 'a piece of the last stage would be its answer, given away').toBe(false)
  })

  it.for(givenFiles.map((f) => relative(repoRoot, f)))('%s is identical to the solution it comes from', (file) => {
    const given = resolve(repoRoot, file)
    const solution = sourceOf(given)
    expect(declarations(given).size, file).toBeGreaterThan(0)
    expect(differences(given, solution)).toEqual([])
  })

  it('a given piece that drifted from its solution fails, naming both files', () => {
    mkdirSync(join(repoRoot, '.lab'), { recursive: true })
    const drifted = join(repoRoot, '.lab', `drifted-${process.pid}.ts`)
    const original = readFileSync(resolve(givenRoot, '04-replay', 'replay.ts'), 'utf8')
    try {
      writeFileSync(drifted, original.replace("'true'", "'yes'"))
      expect(differences(drifted, resolve(repoRoot, 'solutions/04-replay/idempotency.ts'))).toEqual([
        `.lab/drifted-${process.pid}.ts: replay is not the same as in solutions/04-replay/idempotency.ts`,
      ])
    } finally {
      rmSync(drifted, { force: true })
    }
  })

  it.for(course.stages.filter((s) => givenFiles.some((f) => givenStage(f) === s.number)))(
    'given/$folder uses only the bank and given pieces of earlier stages',
    (stage) => {
      const dir = join(givenRoot, stage.folder)
      // Scanned as the code of the stage after it, the first that may load it.
      expect(findCopiedAnswers({ stage: stage.number + 1, dir, shownAs: `given/${stage.folder}` })).toEqual([])
      for (const file of readdirSync(dir))
        for (const later of course.stages.filter((s) => s.number >= stage.number))
          expect(readFileSync(join(dir, file), 'utf8'), `given/${stage.folder}/${file} imports stage ${later.number}`).not.toContain(`#given/${later.folder}`)
    },
  )
})
