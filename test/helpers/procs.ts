// Finds processes by reading /proc, so a test can prove that the processes a
// run started are gone. Other sessions run graders on this machine at the same
// time: a test only ever asks about processes it can attribute to itself (a
// marker in their environment or command line, or descent from a pid it
// spawned), never about "every bank on the machine".
import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

export type Proc = { pid: number; ppid: number; pgrp: number; state: string; startTime: string; cmdline: string }

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name in parentheses may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
    return { pid, ppid: Number(fields[1]), pgrp: Number(fields[2]), state: fields[0]!, startTime: fields[19]!, cmdline }
  } catch {
    return undefined // it exited while we looked
  }
}

function environ(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8')
  } catch {
    return ''
  }
}

/** Every live process (zombies excluded: they have exited and hold no resources but a pid). */
/** A bank server's command line: the grade's bundle of the bank (harness/serverBuild.ts), or bank/main.ts under tsx. */
export const isBankServer = (cmdline: string) => /\/bank\.[cm]js\b/.test(cmdline) || cmdline.includes('bank/main.ts')

/** The child that runs a learner's export (grader/policing/learnerCode.ts): its bundle, export-N.cjs. */
export const isLearnerCodeChild = (cmdline: string) => /\/export-\d+\.[cm]js\b/.test(cmdline)

export function listProcesses(): Proc[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p): p is Proc => !!p && p.state !== 'Z')
}

/** Processes whose environment or command line contains `marker` (e.g. a temp folder only this run uses). */
export function processesWithMarker(marker: string): Proc[] {
  return listProcesses().filter((p) => p.pid !== process.pid && (p.cmdline.includes(marker) || environ(p.pid).includes(marker)))
}

/** All descendants of `root` that are alive now. */
export function descendantsOf(root: number): Proc[] {
  const all = listProcesses()
  const found: Proc[] = []
  let frontier = [root]
  while (frontier.length) {
    const children = all.filter((p) => frontier.includes(p.ppid))
    found.push(...children)
    frontier = children.map((c) => c.pid)
  }
  return found
}

/** Whether this very process (same pid and start time, so not a reused pid) still runs. */
export function stillRunning(proc: Proc): boolean {
  const now = readProc(proc.pid)
  return !!now && now.startTime === proc.startTime && now.state !== 'Z'
}

/**
 * Waits until `find()` returns nothing, and returns what is still there at the
 * deadline. A killed process needs a moment to be reaped (longer on a loaded
 * machine: the limit is generous, and costs nothing when all are gone); a
 * leaked one stays.
 */
export async function leftoverAfter(find: () => Proc[], timeoutMs = 10_000): Promise<Proc[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const left = find()
    if (left.length === 0 || Date.now() > deadline) return left
    await sleep(50)
  }
}

/** Polls `find()` until it returns something (or the deadline passes). */
export async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(25)
  }
}

/** Whether `pid` is a live (non-zombie) process. */
export function pidAlive(pid: number): boolean {
  const p = readProc(pid)
  return !!p && p.state !== 'Z'
}

/**
 * Pids of the postgres server processes (postmasters) that are ours or nobody's:
 * our children, or orphans adopted by init. Another program's postgres (a CI
 * service, a grade running beside this file) has a parent of its own.
 */
export function ourOrOrphanedPostmasters(): number[] {
  const comm = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
    } catch {
      return '' // it exited while we looked
    }
  }
  return listProcesses()
    .filter((p) => (p.ppid === process.pid || p.ppid === 1) && comm(p.pid) === 'postgres')
    .map((p) => p.pid)
}
