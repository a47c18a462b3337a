// Node's permission model around the processes that run learner code (the bank
// server of a graded stage, and the child that calls a learner's export), so
// that a path computed at run time cannot read solutions/ either: reading is
// allowed only in the stage's own folder, bank/, the given/ pieces of earlier
// stages, node_modules and the run's own temporary folder.
//
// A graded server runs from a bundle (serverBuild.ts): plain node, so it may
// start no worker thread and no child process either. What it does not stop
// is a process run under tsx (`tsx: true`: a scenario server of the grader's
// self-tests, `npm run serve`): tsx needs a worker thread (its loader) and a
// child process (esbuild's service), and a child process is not confined. A
// learner's code run that way could spawn `cat ../solutions/…`.
// docs/instructors.md says so; a container or bubblewrap closes that door.
import { realpathSync } from 'node:fs'
import { resolve } from 'node:path'
import { repoRoot } from './paths.ts'
import { COURSE_RUNTIME, earlierGiven } from './stageReach.ts'

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
  /** It runs under tsx, which needs a worker thread and a child process (see above). */
  tsx?: boolean
}

/** Node options that confine a process; put them before `--import tsx`. */
export function confinementArgs(c: Confinement): string[] {
  const readable = [
    ...c.readable,
    c.cwd,
    // tsx asks whether the file system is case-sensitive by testing the
    // working directory with its letters' case swapped: a path that does not
    // exist, on a case-sensitive file system.
    ...(c.tsx ? [swapCase(c.cwd)] : []),
    ...earlierGiven(c.stage),
    ...COURSE_RUNTIME, // node_modules: the link itself, when it is one
    realOr(resolve(repoRoot, 'node_modules')),
    ...c.writable,
  ]
  return [
    PERMISSION_FLAG,
    // Node's notes about these flags would stand at the top of every server log.
    '--disable-warning=ExperimentalWarning',
    '--disable-warning=SecurityWarning',
    '--allow-addons', // better-sqlite3
    ...(c.tsx ? ['--allow-worker', '--allow-child-process'] : []), // tsx's loader thread and esbuild's service (see above)
    ...outermost(readable).map((p) => `--allow-fs-read=${p}`),
    ...outermost(c.writable).map((p) => `--allow-fs-write=${p}`),
  ]
}

/**
 * The paths, less those inside another of them. Node 20's permission model
 * refuses a folder that is granted together with a folder inside it
 * (--allow-fs-read=/a --allow-fs-read=/a/b denies /a itself), and the outer
 * grant covers the inner one anyway.
 */
export function outermost(paths: string[]): string[] {
  const unique = [...new Set(paths)]
  return unique.filter((p) => !unique.some((q) => q !== p && p.startsWith(q.endsWith('/') ? q : `${q}/`)))
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
