// Refuses copied answers before any server starts: a learner file that loads
// the reference solution (by the `#solutions/` alias, by a relative or
// absolute path into solutions/, by import() or require() with a literal, or
// by being a symbolic link into it) scores 0 for its stage. `given/` holds
// earlier stages' pieces, solved: a stage may use those of earlier stages
// only, never the piece that is its own answer. Paths computed at run time
// are not visible here; confinement.ts makes solutions/ unreadable to the
// graded process for those.
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { initSync, parse } from 'es-module-lexer'
import { repoRoot } from '#harness/paths.ts'
import type { ScanTarget } from '#harness/workspace.ts'
import { type Line, listOf, phrases } from '#harness/i18n/phrase.ts'

// es-module-lexer finds import, export … from and import() with a literal
// (in TypeScript too: it reads tokens, not types), in a fraction of the time
// loading TypeScript's own scanner took; require() with a literal is the
// regular expression's.
initSync()
const REQUIRE = /\brequire\s*\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1\s*\)/g

export type Refusal = { file: string; reason: Line }

// What a refusal tells the learner, as templates the packs translate (i18n/<lang>.json, "messages": copiedAnswers.<key>).
const say = phrases('copiedAnswers', {
  importsSolution: 'imports the reference solution',
  importsGiven: "imports the reference solution ({path} is stage {given}'s answer; stage {stage} may use given/ of earlier stages only)",
  link: 'is a link into solutions/ or given/: it {reason}',
  refusal: '{file} {reason}',
  readAtRunTime: '{shownAs} imports the reference solution (at run time it tried to read {path}, which the grader does not let it read)',
})

const SOLUTION_REASON = say('importsSolution')

const CODE = /\.(?:ts|mts|cts|js|mjs|cjs|tsx|jsx)$/

/** Stage number of a `given/NN-slug/…` path, or undefined for any other path. */
export function givenStage(path: string): number | undefined {
  const rel = relative(resolve(repoRoot, 'given'), path)
  const m = /^(\d+)-/.exec(rel)
  return m && !rel.startsWith('..') ? Number(m[1]) : undefined
}

/** Every reason to refuse this stage's folder; empty when it loads no answer it should not. */
export function findCopiedAnswers(target: ScanTarget): Refusal[] {
  const solutionRoots = [resolve(repoRoot, 'solutions'), ...(target.checkout ? [resolve(target.checkout, 'solutions')] : [])]
  const forbidden = (path: string): Line | undefined => {
    const real = realOrSelf(path)
    for (const candidate of new Set([path, real])) {
      // The graded folder itself is fine (with --solution it lies in solutions/); a link out of it is not.
      if (inside(target.dir, candidate)) continue
      if (solutionRoots.some((root) => inside(root, candidate))) return SOLUTION_REASON
      const g = givenStage(candidate)
      if (g !== undefined && g >= target.stage) return say('importsGiven', { path: relative(repoRoot, candidate), given: g, stage: target.stage })
    }
    return undefined
  }
  const refusals: Refusal[] = []
  const seen = new Set<string>()
  const files = listCode(target.dir)
  const visit = (file: string, shown: string, from: string[]) => {
    if (seen.has(file)) return
    seen.add(file)
    const link = forbidden(file)
    if (link) return void refusals.push({ file: shown, reason: say('link', { reason: link }) })
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch {
      return // not there: loading it fails on its own
    }
    for (const spec of specifiers(text)) {
      const reason = forbiddenSpecifier(spec, target.stage)
      if (reason) {
        refusals.push({ file: shown, reason })
        continue
      }
      const paths = resolveSpecifier(spec, from)
      const hit = paths.map(forbidden).find(Boolean)
      if (hit) {
        refusals.push({ file: shown, reason: hit })
        continue
      }
      // A relative import that leaves the folder: that file is scanned too.
      const next = paths.find((p) => existsSync(p) && !inside(target.dir, p) && !inside(resolve(repoRoot, 'bank'), p) && !inside(resolve(repoRoot, 'given'), p))
      if (next && CODE.test(next)) visit(next, relative(repoRoot, next) || next, [dirname(next)])
    }
  }
  for (const name of files) visit(join(target.dir, name), `${target.shownAs}/${name}`, [target.dir, ...(target.original ? [target.original] : [])])
  return refusals
}

/** The refusal as one line per file, e.g. `stages/05-scope-ttl/idempotency.ts imports the reference solution`. */
export function describeRefusals(refusals: Refusal[]): Line {
  const lines = new Map(refusals.map((r) => say('refusal', { file: r.file, reason: r.reason })).map((line) => [String(line), line]))
  return listOf([...lines.values()], 'lines')
}

/**
 * The permission model's refusal (confinement.ts) as a learner reads it, when
 * a process tried to read solutions/ at run time (a computed path); undefined
 * for any other failure.
 */
export function deniedSolutionRead(shownAs: string, log: string): Line | undefined {
  if (!log.includes('ERR_ACCESS_DENIED')) return undefined
  const resource = /resource: '([^']+)'/.exec(log)?.[1]
  if (!resource || !inside(resolve(repoRoot, 'solutions'), resource)) return undefined
  return say('readAtRunTime', { shownAs, path: relative(repoRoot, resource) })
}

function forbiddenSpecifier(spec: string, stage: number): Line | undefined {
  if (spec.startsWith('#solutions/') || spec === '#solutions') return SOLUTION_REASON
  const given = /^#given\/(\d+)-/.exec(spec)
  if (given && Number(given[1]) >= stage) return say('importsGiven', { path: spec.slice(1), given: Number(given[1]), stage })
  return undefined
}

/** Where a path-like specifier lands, from each folder the file may run in; packages and aliases are not paths. */
function resolveSpecifier(spec: string, from: string[]): string[] {
  if (spec.startsWith('#given/')) return [resolve(repoRoot, spec.slice(1))]
  if (spec.startsWith('file:')) {
    try {
      return [fileURLToPath(spec)]
    } catch {
      return []
    }
  }
  if (isAbsolute(spec)) return [resolve(spec)]
  if (spec.startsWith('.')) return from.map((dir) => resolve(dir, spec))
  return []
}

function specifiers(text: string): string[] {
  let imports: readonly { n?: string }[] = []
  try {
    ;[imports] = parse(text)
  } catch {
    // Not lexable as a module: it cannot be loaded either, and fails on its own when it is.
  }
  const required = [...text.matchAll(REQUIRE)].map((m) => m[2]!)
  return [...imports.flatMap((i) => (i.n === undefined ? [] : [i.n])), ...required]
}

function listCode(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => CODE.test(name) || lstatSync(join(dir, name)).isSymbolicLink())
      .sort()
  } catch {
    return []
  }
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}

function inside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
}
