// Finds every process a grader child started, even after the child is gone.
// The bank servers and the learner-export children run in process groups of
// their own (spawnServer.ts, learnerCode.ts), so killing the grader's group
// does not reach them, and a grader killed with SIGKILL cannot stop them
// itself. What they all keep is the HOME they were given: the roster gives
// each grader child a private HOME, and /proc/PID/environ shows it.
// Linux only; elsewhere (no /proc) nothing is found and docs/instructors.md says so.
import { readdirSync, readFileSync } from 'node:fs'

export type Marked = { pid: number; stageDir?: string }

export function findMarked(home: string): Marked[] {
  let pids: string[]
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
  const found: Marked[] = []
  for (const name of pids) {
    const pid = Number(name)
    if (pid === process.pid) continue
    let environ: string[]
    try {
      environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
    } catch {
      continue // gone already, or not ours to read
    }
    if (!environ.includes(`HOME=${home}`)) continue
    const stageDir = environ.find((v) => v.startsWith('LAB_STAGE_DIR='))?.slice('LAB_STAGE_DIR='.length)
    found.push({ pid, stageDir })
  }
  return found
}

/** SIGKILLs every marked process and its group; returns what was found. */
export function killMarked(home: string): Marked[] {
  const found = findMarked(home)
  for (const { pid } of found) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL')
      } catch {
        // Not a group leader, or already gone.
      }
    }
  }
  return found
}
