// The mutants against the solutions they edit: every edit still finds its
// declaration and its fragment exactly once, and an edit that no longer does
// says which mutant, file, declaration and text; and every mutant, built,
// type-checks. Fast: it grades nothing.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join, relative, resolve, sep } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { mutants } from '#grader/mutants/index.ts'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'

const solutionsRoot = resolve(repoRoot, 'solutions')
const byId = (id: string) => mutants.find((m) => m.id === id)!

/** The files materialize() writes for `m`, by learner file. */
function materialized(m: Mutant, root = solutionsRoot): Map<string, string> {
  const checkout = materialize(m, root)
  const folder = stageByNumber(m.stage).folder
  return new Map(stageByNumber(m.stage).edits.map((file) => [file, readFileSync(join(checkout, 'stages', folder, file), 'utf8')]))
}

describe('every mutant', () => {
  it.for(mutants)('$id: each edit names its declaration, applies once, and changes its file', (m) => {
    for (const edit of m.edits) expect(edit.at, `${m.id} edits ${edit.file} somewhere named`).toBeTruthy()
    const folder = stageByNumber(m.stage).folder
    for (const [file, text] of materialized(m)) {
      const solution = readFileSync(join(solutionsRoot, folder, file), 'utf8')
      if (m.edits.some((e) => e.file === file)) expect(text, `${m.id} changes ${file}`).not.toBe(solution)
      else expect(text, `${m.id} leaves ${file} as it is`).toBe(solution)
    }
  })
})

describe('an edit that no longer matches its solution', () => {
  const copy = mkdtempSync(join(tmpdir(), 'solutions-'))
  cpSync(solutionsRoot, copy, { recursive: true })
  afterAll(() => rmSync(copy, { recursive: true, force: true }))
  /** Rewrites a file of the copied solutions. */
  const rewrite = (file: string, change: (text: string) => string) => writeFileSync(join(copy, file), change(readFileSync(join(copy, file), 'utf8')))
  const keyStore5 = join(copy, '05-scope-ttl', 'keyStore.ts')

  it('names the mutant, the file, the declaration and the text it looked for', () => {
    rewrite('05-scope-ttl/keyStore.ts', (text) => text.replaceAll('ttlMs', 'keyTtlMs'))
    expect(() => materialized(byId('no-expiry'), copy)).toThrow(
      `mutant no-expiry: the text it replaces occurs 0 times in \`claim\` of ${keyStore5}, not exactly once. It looked for:\nnow + ttlMs`,
    )
  })

  it('names the declaration that is gone', () => {
    rewrite('05-scope-ttl/keyStore.ts', (text) => text.replaceAll('purgeEveryMs', 'purgeIntervalMs'))
    expect(() => materialized(byId('never-purged'), copy)).toThrow(
      `mutant never-purged: ${keyStore5} has no declaration \`purgeEveryMs\` (a function, method, variable or property, or \`import <module>\`) to edit. It looked for:\n= …`,
    )
  })

  it('says when a fragment occurs twice: a name declared twice (a statement, a method) stands for both', () => {
    rewrite('03-in-progress/keyStore.ts', (text) =>
      text.replace(
        '    complete(key: string, owner: string): void {',
        (found) => `${found}\n      // WHERE key = ? AND owner = ? AND status = 'in_progress' is the owner check`,
      ),
    )
    expect(() => materialized(byId('lease-without-owner-check'), copy)).toThrow(
      /occurs 2 times in `complete` of .*03-in-progress\/keyStore\.ts, not exactly once/,
    )
  })
})

// An edit whose *inserted* text names a variable of the solution still applies
// after that variable is renamed, and builds a mutant that refers to a name
// that no longer exists. The grader runs learner code through tsx, which does
// not typecheck, so such a mutant would fail its check for the wrong reason.
// So every built mutant is type-checked, all at once, by one run of tsc.

/**
 * The mutants that may have type errors, each with the only errors it may have
 * (TypeScript's code and the first line of its message; any other error still
 * fails), and why. An entry whose mutant has none of them any more fails too:
 * take it out.
 */
const typeErrorsAllowed: Record<string, { errors: Array<{ code: string; message: string }>; why: string }> = {
  'no-lease': {
    errors: [{ code: 'TS18048', message: "'row' is possibly 'undefined'." }],
    why: 'its edit makes every live claim answer in-flight, so the take-over after it is unreachable and tsc no longer narrows `row` there; that code never runs',
  },
  'claim-in-money-transaction': {
    errors: [{ code: 'TS2339', message: "Property 'owner' does not exist on type 'Claim'." }],
    why: "`claim` is assigned inside the transaction's callback, so tsc cannot narrow it to 'claimed' after execute() returns; at run time it is, as the callback throws otherwise",
  },
}

type Diagnostic = { file: string; line: number; column: number; code: string; message: string }

const isAllowed = (id: string, d: Diagnostic) => typeErrorsAllowed[id]?.errors.some((e) => e.code === d.code && e.message === d.message.split('\n')[0]) ?? false
const allowedList = (id: string) => typeErrorsAllowed[id]!.errors.map((e) => `${e.code} ${e.message}`).join('; ')

/** `path(line,col): error TSxxxx: message`, and its indented continuation lines, as tsc prints them with `--pretty false`. */
function parseDiagnostics(output: string, cwd: string): Diagnostic[] {
  const found: Diagnostic[] = []
  for (const line of output.split(/\r?\n/)) {
    const head = /^(.+)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line)
    if (head) found.push({ file: resolve(cwd, head[1]!), line: Number(head[2]), column: Number(head[3]), code: head[4]!, message: head[5]! })
    else if (/^\s+\S/.test(line) && found.length > 0) found.at(-1)!.message += `\n${line}`
  }
  return found
}

describe('every mutant, built', () => {
  it('type-checks: the names its edits insert still exist in the solution', () => {
    const lab = resolve(repoRoot, '.lab')
    mkdirSync(lab, { recursive: true })
    const checkouts = new Map<string, Mutant>()
    const configDir = mkdtempSync(join(lab, 'tsc-mutants-'))
    try {
      for (const m of mutants) {
        let checkout: string
        try {
          checkout = materialize(m)
        } catch {
          continue // an edit that no longer applies: the test above names it
        }
        checkouts.set(checkout, m)
      }
      const stageFiles = (root: string, stage: number) => stageByNumber(stage).edits.map((file) => join(root, stageByNumber(stage).folder, file))
      // The solutions too, in the same run: an error a mutant only inherits
      // from its solution is the solution's, and is said once, as such.
      const stages = [...new Set(mutants.map((m) => m.stage))]
      const files = [...stages.flatMap((n) => stageFiles(solutionsRoot, n)), ...[...checkouts].flatMap(([c, m]) => stageFiles(join(c, 'stages'), m.stage))]
      // Extends the repo's config, so the mutants are held to the solutions'
      // rules, except unused names: removing a check often leaves an import or
      // a parameter unread, which is harmless at run time, while a name that
      // is gone is an error whatever. `#bank/*` and `#given/*` resolve through
      // package.json `imports`, the nearest package.json above .lab/mutants
      // being the repo's.
      const config = join(configDir, 'tsconfig.json')
      const compilerOptions = { noUnusedLocals: false, noUnusedParameters: false }
      writeFileSync(config, JSON.stringify({ extends: resolve(repoRoot, 'tsconfig.json'), compilerOptions, include: [], files }, null, 2))
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
      const run = spawnSync(process.execPath, [tsc, '--noEmit', '--pretty', 'false', '-p', config], { cwd: repoRoot, encoding: 'utf8' })
      const output = `${run.stdout}${run.stderr}`
      const diagnostics = parseDiagnostics(output, repoRoot)
      if (run.status !== 0 && diagnostics.length === 0)
        throw new Error(`tsc -p ${config} failed (exit ${run.status ?? run.signal}) with no error to attribute:\n${output}`)

      const lineOf = (d: Diagnostic) => readFileSync(d.file, 'utf8').split(/\r?\n/)[d.line - 1]?.trim() ?? ''
      /** The same error on the same code, wherever the edits moved it. */
      const sameError = (a: Diagnostic, b: Diagnostic) => a.code === b.code && a.message === b.message && lineOf(a) === lineOf(b)
      const problems: string[] = []
      const ofSolutions = diagnostics.filter((d) => d.file.startsWith(solutionsRoot + sep))
      for (const d of ofSolutions)
        problems.push(
          [
            `solution ${relative(repoRoot, d.file)}:${d.line}:${d.column} ${d.code}: ${d.message}`,
            `    ${lineOf(d)}`,
            '  The solution itself does not type-check (npx tsc --noEmit says so too): fix the solution; its mutants inherit the error and are not listed for it.',
          ].join('\n'),
        )
      const errorsOf = new Map<string, Diagnostic[]>()
      for (const d of diagnostics) {
        if (ofSolutions.includes(d)) continue
        const checkout = [...checkouts.keys()].find((c) => d.file.startsWith(c + sep))
        if (checkout === undefined) {
          problems.push(`${relative(repoRoot, d.file)}:${d.line}:${d.column} (in no mutant) ${d.code}: ${d.message}`)
          continue
        }
        const m = checkouts.get(checkout)!
        errorsOf.set(m.id, [...(errorsOf.get(m.id) ?? []), d])
        const solution = join(solutionsRoot, relative(join(checkout, 'stages'), d.file))
        if (isAllowed(m.id, d) || ofSolutions.some((s) => s.file === solution && sameError(s, d))) continue
        problems.push(
          [
            `mutant ${m.id}: ${relative(checkout, d.file)}:${d.line}:${d.column} ${d.code}: ${d.message}`,
            `    ${lineOf(d)}`,
            `  A name the mutant inserts no longer exists in the solution (renamed or removed): update the mutant's \`replace\` in grader/mutants/stage${m.stage}.ts to the solution's name.`,
            `  If the error is the mutant's bug itself, or harmless, add it to typeErrorsAllowed in test/mutants.test.ts with its code, its message and why.`,
            ...(typeErrorsAllowed[m.id] ? [`  (typeErrorsAllowed lets ${m.id} have only ${allowedList(m.id)}: ${typeErrorsAllowed[m.id]!.why})`] : []),
          ].join('\n'),
        )
      }
      for (const id of Object.keys(typeErrorsAllowed)) {
        if (!mutants.some((m) => m.id === id)) problems.push(`typeErrorsAllowed names ${id}, which is no mutant: take it out`)
        else if (![...checkouts.values()].some((m) => m.id === id))
          continue // not built: the test above names it
        else if (!errorsOf.get(id)?.some((d) => isAllowed(id, d)))
          problems.push(`mutant ${id} type-checks without ${allowedList(id)} now: take it out of typeErrorsAllowed`)
      }
      expect(problems, `mutants that do not type-check (tsc --noEmit -p ${relative(repoRoot, config)}):\n\n${problems.join('\n\n')}\n`).toEqual([])
    } finally {
      rmSync(configDir, { recursive: true, force: true })
    }
  })
})
