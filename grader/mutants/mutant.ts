// Known-wrong implementations. A mutant is a reference solution with one
// classic bug, written as a few edits. Each edit is located by a name the
// solution keeps while its code improves, not by a pasted copy of that code:
//
// - `at` names a declaration of the file: a function, a method, a variable or
//   an object property (`claim`, `handle`, `purgeEveryMs`), or an import
//   (`import #bank/layer.ts`). These are the course's API and the solutions'
//   own words, so the solutions carry no markers and read as a learner expects.
//   An edit sees the declaration's whole lines; a name declared twice (a
//   `complete` statement and a `complete()` method) stands for both.
// - `find` is a short fragment of that declaration, which must occur in it
//   exactly once. `…` in it stands for any text up to the next part, or to the
//   end of the declaration when it comes last: a block is named by its first
//   and last words, not pasted whole.
// - `replace` is the text put in its place. Edits apply in order, each to the
//   text the ones before it left.
//
// Renaming or rewriting what a fragment names makes materialize() throw,
// naming the mutant, the file, the declaration and the fragment; only that
// edit needs a look. test/mutants.test.ts materializes every mutant.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'

export type Edit = {
  /** A learner file of the stage. */
  file: string
  /** The declaration the edit changes (see above). Left out only by one-off layers in tests, which search the whole file. */
  at?: string
  find: string
  replace: string
}

export type Mutant = {
  /** e.g. `check-then-insert` (unique across the course). */
  id: string
  stage: number
  /** The bug, in a few words a learner would recognise. */
  title: string
  /** The id of the check that must fail on this mutant, every run. */
  mustFail: string
  edits: Edit[]
}

/** In `find`, any text. */
const ANY = '…'

/**
 * The edits of one learner file: `keyStore('claim', 'now + ttlMs', (found) => `${found} / 1000`)`.
 * A function computes the replacement from a plain fragment, to add text around it without repeating it.
 */
export const editsOf =
  (file: string) =>
  (at: string, find: string, replace: string | ((found: string) => string)): Edit => {
    if (typeof replace === 'function' && find.includes(ANY))
      throw new Error(`an edit of ${file} at ${at} builds its replacement from a fragment with ${ANY} in it`)
    return { file, at, find, replace: typeof replace === 'string' ? replace : replace(find) }
  }

/**
 * Writes the mutant as a checkout the grader can take with `--dir`:
 * `.lab/mutants/<id>-<digest>/stages/<folder>/` holding the solution's learner
 * files with the edits applied, and returns its path. The folder is named by
 * what it holds, so every grade of the same mutant (a test, each seed of the
 * repetitions, parallel workers) reuses one, written once and never changed;
 * a folder of the same mutant holding other files (the solution or the edits
 * changed since) is removed. Nobody removes the current one: it is a cache.
 */
export function materialize(mutant: Mutant, solutionsRoot = resolve(repoRoot, 'solutions')): string {
  const stage = stageByNumber(mutant.stage)
  const files = new Map(stage.edits.map((file) => [file, readFileSync(join(solutionsRoot, stage.folder, file), 'utf8')]))
  for (const edit of mutant.edits) {
    const text = files.get(edit.file)
    if (text === undefined) throw new Error(`mutant ${mutant.id}: ${edit.file} is not a learner file of stage ${stage.number}`)
    const solution = join(solutionsRoot, stage.folder, edit.file)
    const shown = relative(repoRoot, solution).startsWith('..') ? solution : relative(repoRoot, solution)
    files.set(
      edit.file,
      applyEdit(text, edit, (problem) => new Error(`mutant ${mutant.id}: ${problem(shown)}. It looked for:\n${edit.find}`)),
    )
  }
  const digest = createHash('sha256')
    .update(JSON.stringify([stage.folder, ...files]))
    .digest('hex')
    .slice(0, 16)
  const base = resolve(repoRoot, '.lab', 'mutants')
  const checkout = join(base, `${mutant.id}-${digest}`)
  if (existsSync(checkout)) return checkout
  mkdirSync(base, { recursive: true })
  // Written in a folder of its own, then renamed into place: a grade never sees half a checkout, and two writers the same one.
  const writing = mkdtempSync(join(base, `.${mutant.id}-`))
  const dir = join(writing, 'stages', stage.folder)
  mkdirSync(dir, { recursive: true })
  for (const [file, text] of files) writeFileSync(join(dir, file), text)
  try {
    renameSync(writing, checkout)
  } catch {
    rmSync(writing, { recursive: true, force: true }) // another process wrote it first: the same files
  }
  for (const stale of readdirSync(base).filter((name) => name.startsWith(`${mutant.id}-`) && name !== basename(checkout)))
    rmSync(join(base, stale), { recursive: true, force: true })
  return checkout
}

function applyEdit(text: string, edit: Edit, fail: (problem: (file: string) => string) => Error): string {
  const spans = edit.at === undefined ? [{ start: 0, end: text.length }] : declarations(text, edit.at)
  if (spans.length === 0)
    throw fail((file) => `${file} has no declaration \`${edit.at}\` (a function, method, variable or property, or \`import <module>\`) to edit`)
  const matches = spans.flatMap(({ start, end }) => occurrences(text.slice(start, end), edit.find).map((m) => ({ start: start + m.start, end: start + m.end })))
  if (matches.length !== 1)
    throw fail((file) => `the text it replaces occurs ${matches.length} times in ${edit.at === undefined ? '' : `\`${edit.at}\` of `}${file}, not exactly once`)
  const [{ start, end }] = matches as [{ start: number; end: number }]
  return text.slice(0, start) + edit.replace + text.slice(end)
}

/** Where `find` occurs in `text`, each `…` in it matching the shortest text up to its next part (or all the rest, last). */
function occurrences(text: string, find: string): Array<{ start: number; end: number }> {
  const [first, ...rest] = find.split(ANY) as [string, ...string[]]
  const found: Array<{ start: number; end: number }> = []
  for (let start = text.indexOf(first); start !== -1; start = text.indexOf(first, start + 1)) {
    let end = start + first.length
    for (const part of rest) {
      const at = part === '' ? text.length : text.indexOf(part, end)
      end = at === -1 ? -1 : at + part.length
      if (end === -1) break
    }
    if (end !== -1) found.push({ start, end })
  }
  return found
}

/** The outermost declarations named `name`, each as whole lines: from its indentation to its trailing comment or comma. */
function declarations(text: string, name: string): Array<{ start: number; end: number }> {
  const source = ts.createSourceFile('solution.ts', text, ts.ScriptTarget.Latest, true)
  const spans: Array<{ start: number; end: number }> = []
  const visit = (node: ts.Node): void => {
    if (nameOf(node) !== name) return void ts.forEachChild(node, visit)
    const start = node.getStart(source)
    const end = text.indexOf('\n', node.end)
    spans.push({ start: text.lastIndexOf('\n', start - 1) + 1, end: end === -1 ? text.length : end })
  }
  visit(source)
  return spans
}

function nameOf(node: ts.Node): string | undefined {
  if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) return `import ${node.moduleSpecifier.text}`
  // `const x = …` is named by the whole statement, `export` and `const` included.
  if (ts.isVariableStatement(node) && node.declarationList.declarations.length === 1) return nameOf(node.declarationList.declarations[0]!)
  if (ts.isVariableDeclaration(node) || ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isPropertyAssignment(node))
    return node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) ? node.name.text : undefined
  return undefined
}
