// A server that runs into a limit (limits.ts) usually dies of it, and its end
// names the limit (limitVerdict). One that catches the error and then waits
// (for a child that never came, for memory that never frees) neither listens
// nor exits: at the start-up ceiling it looks like a slow server. What tells
// them apart is what the kernel counts, read while its processes still live:
//   processes  the pids cgroup's pids.events ("max N": N forks or threads
//              refused at pids.max) and pids.current, where there is one;
//              otherwise the tasks (processes and threads) of its process
//              tree, close to what RLIMIT_NPROC counts: at NEARLY_FULL of the
//              limit or more, it is at the limit;
//   memory     each process's VmData (what RLIMIT_DATA counts), against the
//              limit: at NEARLY_FULL of it or more, it is at the limit.
// An honest bank uses far less of either (limits.ts: each default is 4× its
// peak), so "nearly full" is never a slow server's state.
// Read from /proc and /sys on the host: Linux only, like the limits.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { change, itSaid, type Limits } from './limits.ts'
import { type Line, listOf, type Phrase, phrases } from './i18n/phrase.ts'

// What a stuck server is told, as templates the packs translate (i18n/<lang>.json, "messages": limitCounters.<key>).
const say = phrases('limitCounters', {
  refusedOnce: '{who} was refused a new process or thread 1 time, with {tasks} running of at most {procs}, {change}',
  refused: '{who} was refused a new process or thread {times} times, with {tasks} running of at most {procs}, {change}',
  atProcs: '{who} runs {tasks} processes and threads, at its limit of {procs}, {change}',
  atMemory: '{who} holds {mb} MB of memory, nearly all of {limit} MB, {change}',
  note: '{tasks} processes and threads of {procs}, {mb} MB of memory{memory}',
  ofMb: ' of {mb} MB',
})

/** A share of a limit at which the next allocation or thread of any size may be refused: at the limit. */
const NEARLY_FULL = 0.9

export type LimitCounters = {
  /** Processes and threads of the tree (or the cgroup's pids.current, when it has one). */
  tasks: number
  /** How many new processes or threads the pids cgroup refused (undefined: no cgroup). */
  refusedTasks?: number
  /** The largest VmData among its processes, in MB. */
  largestDataMb: number
}

const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/** `root` and every process below it that is alive now, from /proc/<pid>/stat's parent field. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>()
  for (const name of safeList('/proc')) {
    if (!/^\d+$/.test(name)) continue
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const stat = read(`/proc/${name}/stat`)
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    if (Number.isInteger(ppid)) parents.set(ppid, [...(parents.get(ppid) ?? []), Number(name)])
  }
  const tree = [root]
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []))
  return tree.filter((pid) => read(`/proc/${pid}/stat`) !== '')
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

const statusField = (status: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0)

/** What the kernel counts of the process tree under `pid` and of its pids cgroup, now. */
export function readLimitCounters(pid: number, cgroup: string | undefined): LimitCounters {
  let tasks = 0
  let largestDataKb = 0
  for (const member of processTree(pid)) {
    const status = read(`/proc/${member}/status`)
    tasks += statusField(status, 'Threads')
    largestDataKb = Math.max(largestDataKb, statusField(status, 'VmData'))
  }
  const counters: LimitCounters = { tasks, largestDataMb: Math.round(largestDataKb / 1024) }
  if (cgroup) {
    const current = Number(read(join(cgroup, 'pids.current')).trim())
    if (Number.isInteger(current) && current > 0) counters.tasks = current
    counters.refusedTasks = Number(/^max (\d+)/m.exec(read(join(cgroup, 'pids.events')))?.[1] ?? 0)
  }
  return counters
}

/**
 * The limit a live process is stuck at, as a sentence for the learner ("it
 * was refused a new process or thread 37 times: …"), or undefined when its
 * counters are below every limit (then it is slow, or waiting on something
 * else), naming it "it".
 */
export function stuckAtLimit(counters: LimitCounters, limits: Limits): Phrase | undefined {
  const who = itSaid()
  const found: Phrase[] = []
  const { refusedTasks = 0, tasks } = counters
  if (refusedTasks === 1) found.push(say('refusedOnce', { who, tasks, procs: limits.procs, change: change('procs') }))
  else if (refusedTasks > 0) found.push(say('refused', { who, times: refusedTasks, tasks, procs: limits.procs, change: change('procs') }))
  else if (tasks >= limits.procs * NEARLY_FULL) found.push(say('atProcs', { who, tasks, procs: limits.procs, change: change('procs') }))
  if (counters.largestDataMb >= limits.memoryMb * NEARLY_FULL)
    found.push(say('atMemory', { who, mb: counters.largestDataMb, limit: limits.memoryMb, change: change('memory') }))
  // A list of one is that phrase itself.
  return found.length ? (listOf(found, 'semicolon') as Phrase) : undefined
}

/** The counters as a short note, for a server below every limit ("5 processes and threads of 128, 112 MB of 1024 MB"). */
export function countersNote(counters: LimitCounters, limits: Limits): Phrase {
  const memory = Number.isFinite(limits.memoryMb) ? say('ofMb', { mb: limits.memoryMb }) : ''
  return say('note', { tasks: counters.tasks, procs: limits.procs, mb: counters.largestDataMb, memory })
}

/** A countersNote read back from its English (a start failure's reason holds it as text), in the learner's language; text it does not know stays as it is. */
export function noteSaid(text: string): Line {
  const m = /^(\d+) processes and threads of (\d+), (\d+) MB of memory(?: of (\d+) MB)?$/.exec(text)
  return m ? say('note', { tasks: m[1]!, procs: m[2]!, mb: m[3]!, memory: m[4] ? say('ofMb', { mb: m[4] }) : '' }) : text
}
