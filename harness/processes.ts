// Every child the grader starts is registered here, so that nothing outlives
// the grader: not on success, not on a thrown error, not on Ctrl-C.
import type { ChildProcess } from 'node:child_process'
import { constants as osConstants } from 'node:os'

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
  // Started by code still running after an interrupt (a replay restarting a server): it stops at once.
  if (interruptedBy) void stopGroup(child, shutdownGraceMs)
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
/** The signal that interrupted this process, or 'quit': a command's own way out (quit()), which stops the same way. */
let interruptedBy: NodeJS.Signals | 'quit' | undefined

/**
 * Whether a signal interrupted this process (installSignalCleanup), or it
 * quit (quit()). What runs on after it (a check whose server was just
 * stopped, a roster job whose child was) has no result worth telling or
 * keeping: it asks this first.
 */
export function interrupted(): boolean {
  return interruptedBy !== undefined
}

/** Thrown where work stops because of an interrupt: a command's main() ends in it, and the signal handler decides the exit. */
export class InterruptedError extends Error {
  constructor() {
    super('interrupted')
  }
}

/** The exit status of a process ended by `signal`, as a shell reports it: 130 for SIGINT, 143 for SIGTERM. */
export const signalExitCode = (signal: NodeJS.Signals) => 128 + (osConstants.signals[signal] ?? 15)

/** For a command's main(): exit with its code, unless an interrupt is under way (its handler exits, with 130 or 143, once the children are stopped). */
export function exitUnlessInterrupted(code: number): void {
  if (!interrupted()) process.exit(code)
}

/**
 * For command-line tools: Ctrl-C and friends stop every child first. They get
 * SIGTERM and a moment, not SIGKILL at once: a child that is itself a grader
 * (a roster's) then removes its own temp folders and overlays, and a server
 * closes its database. A second signal while that runs changes nothing.
 *
 * An interrupt is not a result: the process says `interrupted` once, on
 * stderr (`said`: in the learner's language), and nothing after it. Whatever still runs while the children stop
 * (a check failing on its stopped server, a request cut by it) is muted, its
 * errors swallowed, and the process exits with 128 + the signal's number.
 */
export function installSignalCleanup(said: () => string = () => 'interrupted') {
  if (installed) return
  installed = true
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (interruptedBy) return
      interruptedBy = signal
      process.exitCode = signalExitCode(signal)
      // A worker its parent drives over IPC (a test runner's fork, stopped with SIGTERM when the run ends) was not interrupted by anyone.
      if (!process.channel) process.stderr.write(`${said()}\n`)
      stopEverythingAndExit(signalExitCode(signal))
    })
  }
}

/**
 * A command's own way out (watch's q key): every child stopped and every
 * cleanup run as an interrupt does them, the work under way muted the same
 * way (interrupted() says so), then exit with `code`, and nothing said.
 */
export function quit(code = 0): void {
  if (interruptedBy) return
  interruptedBy = 'quit'
  process.exitCode = code
  stopEverythingAndExit(code)
}

function stopEverythingAndExit(code: number) {
  muteOutput()
  void Promise.all([...live].map(([child, graceMs]) => stopGroup(child, graceMs))).finally(() => {
    killAll()
    process.exit(code)
  })
}

/** After `interrupted`: no line, no stack trace, no crash of what the stopped children leave failing. */
function muteOutput() {
  const silent = ((_chunk: unknown, encoding?: unknown, callback?: unknown) => {
    const done = typeof encoding === 'function' ? encoding : callback
    if (typeof done === 'function') queueMicrotask(() => done())
    return true
  }) as typeof process.stdout.write
  process.stdout.write = silent
  process.stderr.write = silent
  process.on('uncaughtException', () => {})
  process.on('unhandledRejection', () => {})
}
