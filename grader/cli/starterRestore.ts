// Putting a stage's starter back (npm run reset): the files a learner edits in
// stages/<folder> (course.json's `edits`, the files `--dir` takes from a
// checkout and grader/policing/starters.sha256 lists), each as the course
// gave it, and nothing else: not the stage's README, not a file the learner
// added, nothing outside the folder.
//
// Where the starters come from. The course keeps no copy of them besides
// stages/ itself; starters.sha256 holds only their digests. So they come from
// git, but not from HEAD blindly: a learner who commits their work (as GitHub
// Classroom asks) has their own code at HEAD. Each file is taken from the
// newest commit whose version of it has the digest starters.sha256 names,
// which is HEAD for an uncommitted learner and the course's own commit for a
// committed one; a checkout whose history holds no such version (a zip, a
// shallow clone of a learner's commits) restores nothing and says why. The
// blob is written with fs, not `git checkout`/`git restore`: the index is
// left alone, and what is written is exactly the files listed.
import { execFileSync } from 'node:child_process'
import { lstatSync, mkdirSync, readFileSync, type Stats, unlinkSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Stage } from '#harness/course.ts'
import { knownStarterDigest, starterDigest } from '#harness/starterHashes.ts'

/** A learner file of the stage: `path` relative to the checkout; `starter` its content to write, when it differs. */
export type PlannedFile = { path: string; state: 'same' } | { path: string; state: 'changed' | 'missing'; starter: Buffer }

export type ResetPlan = { stage: Stage; files: PlannedFile[] }

export type ResetProblem = { kind: 'noHistory'; error: string } | { kind: 'notInHistory'; path: string } | { kind: 'link'; path: string }

export class ResetError extends Error {
  constructor(readonly problem: ResetProblem) {
    super(`cannot restore: ${JSON.stringify(problem)}`)
  }
}

const lstat = (path: string): Stats | undefined => lstatSync(path, { throwIfNoEntry: false })

/** What restoring `stage` in the checkout at `root` would write; throws ResetError when it cannot be done whole. */
export function planReset(stage: Stage, root: string): ResetPlan {
  // A link on the way would make a write land outside the stage's folder.
  for (const dir of ['stages', `stages/${stage.folder}`]) {
    const stats = lstat(resolve(root, dir))
    if (stats && !stats.isDirectory()) throw new ResetError({ kind: 'link', path: dir })
  }
  const files = stage.edits.map((file): PlannedFile => {
    const path = `stages/${stage.folder}/${file}`
    if (file.includes('/') || file.includes('\\')) throw new ResetError({ kind: 'link', path }) // course.json names files of the folder itself
    const stats = lstat(resolve(root, path))
    if (stats?.isDirectory()) throw new ResetError({ kind: 'link', path })
    const digest = knownStarterDigest(path)
    // A link is never the starter, whatever it points at: it is replaced by the file itself.
    if (stats?.isFile() && digest === starterDigest(readFileSync(resolve(root, path), 'utf8'))) return { path, state: 'same' }
    return { path, state: stats ? 'changed' : 'missing', starter: starterFromHistory(root, path, digest) }
  })
  return { stage, files }
}

/** Writes the plan's starters: each file that differs, replaced whole (a link replaced by a file); nothing else. */
export function applyReset(plan: ResetPlan, root: string): string[] {
  const written: string[] = []
  mkdirSync(resolve(root, 'stages', plan.stage.folder), { recursive: true })
  for (const file of plan.files) {
    if (file.state === 'same') continue
    const target = resolve(root, file.path)
    if (lstat(target)?.isSymbolicLink()) unlinkSync(target)
    writeFileSync(target, file.starter)
    written.push(file.path)
  }
  return written
}

function git(root: string, args: string[]): Buffer {
  return execFileSync('git', ['-C', root, ...args], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 })
}

/** The newest committed version of `path` whose digest is the starter's (see the top of this file). */
function starterFromHistory(root: string, path: string, digest: string | undefined): Buffer {
  if (!digest) throw new ResetError({ kind: 'notInHistory', path })
  let commits: string[]
  try {
    commits = git(root, ['rev-list', '--full-history', 'HEAD', '--', path]).toString('utf8').split('\n').filter(Boolean)
  } catch (error) {
    throw new ResetError({ kind: 'noHistory', error: firstLine(error) })
  }
  for (const commit of commits) {
    let blob: Buffer
    try {
      // ./: the path from the checkout's root, wherever the repository's own root is.
      blob = git(root, ['cat-file', 'blob', `${commit}:./${path}`])
    } catch {
      continue // the commit that deleted it
    }
    if (starterDigest(blob.toString('utf8')) === digest) return blob
  }
  throw new ResetError({ kind: 'notInHistory', path })
}

/** git's own complaint ("fatal: not a git repository …"), or why git did not run at all. */
function firstLine(error: unknown): string {
  const stderr = (error as { stderr?: Buffer }).stderr?.toString('utf8').trim()
  const line = stderr || (error as Error).message
  return line.split('\n')[0]!.replace(/^fatal: /, '')
}
