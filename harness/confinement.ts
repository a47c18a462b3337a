// Node's permission model around the processes that run learner code (the bank
// server of a graded stage, and the child that calls a learner's export), so
// that a path computed at run time cannot read solutions/ either: reading is
// allowed only in the stage's own folder, bank/, the given/ pieces of earlier
// stages, node_modules and the run's own temporary folder.
//
// What it does not stop, on Node 20: tsx needs a worker thread (its loader)
// and a child process (esbuild's service), so --allow-worker and
// --allow-child-process are on, and a child process is not confined. A
// learner who spawns `cat ../solutions/…` still reads it. docs/instructors.md
// says so; a container or bubblewrap closes that door.
import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { course } from './course.ts'
import { repoRoot } from './paths.ts'

/** `--permission` from Node 22.13/23.5; `--experimental-permission` before. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission'

export type Confinement = {
  /** The stage whose code runs: it may read given/ of earlier stages only. */
  stage: number
  /** Folders (or files) it may read besides the course's shared ones. */
  readable: string[]
  /** Folders it may write (and read): its database's and its own TMPDIR. */
  writable: string[]
  /** Its working directory: tsx checks that it exists, so it must be readable. */
  cwd: string
}

/** Node options that confine a process; put them before `--import tsx`. */
export function confinementArgs(c: Confinement): string[] {
  const given = course.stages.filter((s) => s.number < c.stage).map((s) => resolve(repoRoot, 'given', s.folder))
  const modules = resolve(repoRoot, 'node_modules')
  const readable = [
    ...c.readable,
    c.cwd,
    // tsx asks whether the file system is case-sensitive by testing the
    // working directory with its letters' case swapped: a path that does not
    // exist, on a case-sensitive file system.
    swapCase(c.cwd),
    resolve(repoRoot, 'bank'),
    ...given,
    resolve(repoRoot, 'package.json'),
    resolve(repoRoot, 'tsconfig.json'),
    modules, // the link itself, when node_modules is one
    realOr(modules),
    ...c.writable,
  ]
  return [
    PERMISSION_FLAG,
    // Node's notes about these flags would stand at the top of every server log.
    '--disable-warning=ExperimentalWarning',
    '--disable-warning=SecurityWarning',
    '--allow-addons', // better-sqlite3
    '--allow-worker', // tsx's loader thread
    '--allow-child-process', // esbuild's service (see above)
    ...[...new Set(readable)].map((p) => `--allow-fs-read=${p}`),
    ...[...new Set(c.writable)].map((p) => `--allow-fs-write=${p}`),
  ]
}

function swapCase(path: string): string {
  return path.replace(/[a-z]/gi, (ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()))
}

function realOr(path: string): string {
  try {
    return realpathSync(path)
  } catch {
    return path
  }
}
