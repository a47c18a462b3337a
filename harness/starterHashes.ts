// Which learner files are still the course's starters, byte for byte. The
// starter files in stages/ are the one place of truth: grader/policing/starters.sha256
// is generated from them (`npm run starters:hash`, kept current by
// test/starters.test.ts), so an untouched stage is recognised in any checkout,
// this one included, where the learner edits stages/ in place. Here, below the
// grader and the replay, because both say what they ran: `grade -- all` skips
// a stage not started, and the replay's chart marks one.
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { course, type Stage } from './course.ts'
import { repoRoot } from './paths.ts'

export const STARTER_HASHES = resolve(repoRoot, 'grader', 'policing', 'starters.sha256')

/** A file's digest as the list holds it: over the text with CRLF read as LF, so that a Windows checkout of an untouched starter is still untouched. */
export const starterDigest = (text: string): string => createHash('sha256').update(text.replaceAll('\r\n', '\n')).digest('hex')

const sha256 = (path: string) => starterDigest(readFileSync(path, 'utf8'))

/** `sha256sum`'s format, one line per learner file of every stage: `<hex>  stages/<folder>/<file>`. */
export function starterHashList(root = repoRoot): string {
  return course.stages
    .flatMap((s) => s.edits.map((file) => `stages/${s.folder}/${file}`))
    .map((path) => `${sha256(resolve(root, path))}  ${path}\n`)
    .join('')
}

let known: Map<string, string> | undefined

function knownHashes(): Map<string, string> {
  known ??= new Map(
    readFileSync(STARTER_HASHES, 'utf8')
      .trim()
      .split('\n')
      .map((line) => {
        const [hash, path] = line.split(/\s+/)
        return [path!, hash!] as const
      }),
  )
  return known
}

/** The digest the list holds for a learner file's starter, `stages/<folder>/<file>`; none for any other path. */
export const knownStarterDigest = (path: string): string | undefined => knownHashes().get(path)

/**
 * True when the stage's learner files in `checkout` are all the course's
 * starters (or absent: a checkout without the stage has not started it).
 */
export function isUntouched(stage: Stage, checkout: string): boolean {
  return stage.edits.every((file) => {
    const path = resolve(checkout, 'stages', stage.folder, file)
    return !existsSync(path) || knownHashes().get(`stages/${stage.folder}/${file}`) === sha256(path)
  })
}
