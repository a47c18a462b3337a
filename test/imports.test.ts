// The shape of the code as an import graph, read with TypeScript's own parser:
// harness/ is the layer grader/, replay/, bench/ and logs/ stand on, so it
// imports none of them; replay/ and logs/ stand beside the grader, not on it;
// scripts/ (the maintainers' tooling) is imported by no code that runs for a
// learner or an instructor;
// and no module of the course imports itself back through a chain of others.
// Type-only imports count too: a cycle of types is still two modules that
// cannot be understood one without the other.
import { readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'

const skipped = new Set(['node_modules', '.git', '.lab'])

/** Every .ts file of the course, relative to the root. */
function courseFiles(dir = repoRoot): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skipped.has(entry.name) || entry.name.startsWith('.')) return []
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return courseFiles(path)
    return entry.name.endsWith('.ts') ? [relative(repoRoot, path)] : []
  })
}

/** The specifiers a file imports: static imports, re-exports and import('literal'). */
function specifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(resolve(repoRoot, file), 'utf8'), ts.ScriptTarget.Latest)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) found.push((node.moduleSpecifier as ts.StringLiteral).text)
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text)
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const aliases: Record<string, string> = JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8')).imports

type Target = { kind: 'module'; path: string } | { kind: 'node' | 'npm'; name: string }

/** A specifier as Node resolves it: a course file (relative to the root), a builtin, or a package. */
function classify(from: string, spec: string): Target {
  for (const [pattern, target] of Object.entries(aliases)) {
    const prefix = pattern.replace(/\*$/, '')
    if (spec.startsWith(prefix)) return { kind: 'module', path: join(target.replace(/\*$/, ''), spec.slice(prefix.length)) }
  }
  if (spec.startsWith('.')) return { kind: 'module', path: relative(repoRoot, resolve(repoRoot, dirname(from), spec)) }
  if (spec.startsWith('node:') || builtinModules.includes(spec)) return { kind: 'node', name: spec }
  return { kind: 'npm', name: spec }
}

const files = courseFiles()
const graph = new Map(files.map((file) => [file, specifiers(file).map((spec) => ({ spec, target: classify(file, spec) }))]))

/** Every cycle a depth-first walk meets, each as the chain of files that closes it. */
function findCycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>()
  const path: string[] = []
  const cycles: string[][] = []
  const walk = (node: string) => {
    state.set(node, 'open')
    path.push(node)
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next])
      else if (!state.has(next)) walk(next)
    }
    path.pop()
    state.set(node, 'done')
  }
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) walk(node)
  return cycles
}

describe('the import graph', () => {
  it('reads the course: the harness, the grader, the replay, the day and the tests are all there', () => {
    for (const file of [
      'harness/spawnServer.ts',
      'grader/engine/grading.ts',
      'replay/run.ts',
      'logs/generator.ts',
      'scripts/i18n/cli.ts',
      'test/imports.test.ts',
    ])
      expect(files).toContain(file)
    expect(graph.get('harness/bankClient.ts')!.map((e) => e.spec)).toContain('./failure.ts')
  })

  it('harness/ imports only harness/, bank/, Node and npm packages', () => {
    const outside = files
      .filter((file) => file.startsWith('harness/'))
      .flatMap((file) =>
        graph
          .get(file)!
          .filter(({ target }) => target.kind === 'module' && !/^(harness|bank)\//.test(target.path))
          .map(({ spec }) => `${file} imports ${spec}`),
      )
    expect(outside).toEqual([])
  })

  it('replay/ and logs/ import only harness/, bank/, their own folder, Node and npm packages: never grader/ (replay/ also logs/, the day it replays)', () => {
    const may = { 'replay/': /^(harness|bank|logs|replay)\//, 'logs/': /^(harness|bank|logs)\// }
    const outside = Object.entries(may).flatMap(([folder, allowed]) =>
      files
        .filter((file) => file.startsWith(folder))
        .flatMap((file) =>
          graph
            .get(file)!
            .filter(({ target }) => target.kind === 'module' && !allowed.test(target.path))
            .map(({ spec }) => `${file} imports ${spec}`),
        ),
    )
    expect(outside).toEqual([])
  })

  it("the run time (harness/, bank/, grader/, replay/, bench/, logs/) imports nothing from scripts/, the maintainers' tooling", () => {
    const runtime = /^(harness|bank|grader|replay|bench|logs)\//
    const intoScripts = [...graph].flatMap(([file, imports]) =>
      runtime.test(file)
        ? imports.filter(({ target }) => target.kind === 'module' && target.path.startsWith('scripts/')).map(({ spec }) => `${file} imports ${spec}`)
        : [],
    )
    expect(intoScripts).toEqual([])
  })

  it('one import style: a module reaches grader/, harness/ or scripts/ from another top folder by its #alias, never by ../', () => {
    const top = (path: string) => path.split('/')[0]
    const relativeAcross = [...graph].flatMap(([file, imports]) =>
      imports
        .filter(
          ({ spec, target }) =>
            spec.startsWith('.') && target.kind === 'module' && /^(grader|harness|scripts)\//.test(target.path) && top(target.path) !== top(file),
        )
        .map(({ spec }) => `${file} imports ${spec}`),
    )
    expect(relativeAcross).toEqual([])
  })

  it('has no cycle among the course modules', () => {
    const edges = new Map([...graph].map(([file, imports]) => [file, imports.flatMap(({ target }) => (target.kind === 'module' ? [target.path] : []))]))
    expect(findCycles(edges).map((cycle) => cycle.join(' -> '))).toEqual([])
  })

  it('finds a cycle when there is one (the walk itself is sound)', () => {
    const edges = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
    ])
    expect(findCycles(edges)).toEqual([['a', 'b', 'c', 'a']])
    expect(
      findCycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([])
  })
})
