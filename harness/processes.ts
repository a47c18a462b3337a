// Every child the grader starts is registered here, so that nothing outlives
// the grader: not on success, not on a thrown error, not on Ctrl-C.
import type { ChildProcess } from 'node:child_process'

/** Each live child, with how long it gets to stop on a signal before SIGKILL. */
const live = new Map<ChildProcess, number>()
const cleanups = new Set<() => void>()

/**
 * The whole environment a child gets: learner code sees none of our
 * secrets. NODE_OPTIONS passes through so that a memory cap set on the
 * grader (the roster sets one) also reaches the servers it starts.
 */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const { PATH = '/usr/bin:/bin', HOME = '/tmp', TMPDIR, NODE_OPTIONS } = process.env
  return { PATH, HOME, ...(TMPDIR ? { TMPDIR } : {}), ...(NODE_OPTIONS ? { NODE_OPTIONS } : {}), ...extra }
}

/** A synchronous cleanup (e.g. removing temp folders) that must also run on exit or Ctrl-C. */
export function onCleanup(fn: () => void): () => void {
  installExitHook()
  cleanups.add(fn)
  return () => cleanups.delete(fn)
}

let exitHookInstalled = false

function installExitHook() {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', killAll)
}

/** `shutdownGraceMs`: the time it gets after SIGTERM when we are interrupted (a grader child needs more: it stops servers of its own). */
export function track(child: ChildProcess, shutdownGraceMs = 2_000) {
  installExitHook()
  live.set(child, shutdownGraceMs)
  child.once('exit', () => live.delete(child))
}

/** Signal a child's whole process group (children are spawned detached, as group leaders). */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  try {
    process.kill(-child.pid, signal)
  } catch {
    // The group is already gone.
  }
}

/** SIGTERM the group, then SIGKILL it if it has not exited after `graceMs`. */
export async function stopGroup(child: ChildProcess, graceMs = 1_500): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  signalGroup(child, 'SIGTERM')
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
  // Grandchildren that ignored SIGTERM, or outlived their leader (a sandbox's
  // inner process): the group lives on without its leader, so signalGroup's
  // "already exited" shortcut must not apply here.
  if (child.pid !== undefined)
    try {
      process.kill(-child.pid, 'SIGKILL')
    } catch {
      // Nobody is left in the group.
    }
}

function killAll() {
  for (const child of live.keys()) signalGroup(child, 'SIGKILL')
  for (const fn of cleanups) fn()
}

let installed = false
let stopping = false
/**
 * For command-line tools: Ctrl-C and friends stop every child first. They get
 * SIGTERM and a moment, not SIGKILL at once: a child that is itself a grader
 * (a roster's) then removes its own temp folders and overlays, and a server
 * closes its database. A second signal while that runs changes nothing.
 */
export function installSignalCleanup() {
  if (installed) return
  installed = true
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (stopping) return
      stopping = true
      void Promise.all([...live].map(([child, graceMs]) => stopGroup(child, graceMs))).finally(() => {
        killAll()
        process.exit(signal === 'SIGINT' ? 130 : 143)
      })
    })
  }
}
