// The embedded PostgreSQL's folders that outlive the process that made them.
// A grader removes its cluster's folder when it stops the server, on exit and
// on Ctrl-C (postgres.ts, processes.ts). A process killed outright (SIGKILL,
// a test runner's worker cut at a hook's timeout, an out-of-memory kill) runs
// none of that: its postmaster dies with it (setpriv --pdeathsig), but the
// folder stays, and as root it is under /tmp, outside any TMPDIR a caller
// could sweep. So each folder names its maker, and the next embedded server
// started on the machine removes the folders whose maker and postmaster are
// both gone.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const CLUSTER_PREFIX = 'idem-pg-'
/** In a cluster's folder: the pid of the process that made it. */
const MAKER_FILE = 'maker.pid'

/** Records this process as the maker of the cluster folder `dir`. */
export function markMaker(dir: string): void {
  writeFileSync(join(dir, MAKER_FILE), `${process.pid}\n`)
}

/**
 * The cluster folders under `base` whose maker has exited and whose
 * postmaster (data/postmaster.pid) is not running. A folder without a maker
 * file (another tool's, or one being made) is not one.
 */
export function orphanedClusters(base: string): string[] {
  let names: string[]
  try {
    names = readdirSync(base)
  } catch {
    return []
  }
  return names
    .filter((n) => n.startsWith(CLUSTER_PREFIX))
    .map((name) => join(base, name))
    .filter((dir) => {
      const maker = pidIn(join(dir, MAKER_FILE))
      if (maker === undefined || isRunning(maker)) return false
      const postmaster = pidIn(join(dir, 'data', 'postmaster.pid'))
      return postmaster === undefined || !isRunning(postmaster)
    })
}

/** Removes the orphaned cluster folders under `base` (orphanedClusters); returns them. */
export function removeOrphanedClusters(base: string): string[] {
  const removed = orphanedClusters(base)
  for (const dir of removed) rmSync(dir, { recursive: true, force: true })
  return removed
}

/** The pid on the first line of `file`, if it holds one. */
function pidIn(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, as another user (a postmaster runs as nobody).
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
