// Resource limits on every process that runs learner code (issue 25): the
// sandbox (sandbox.ts) decides what such a process may see, these decide how
// much of the machine it may take. Without them one submission could allocate
// the instructor's memory away, fork until the host's process table is full,
// fill the disk with one file, or spin every core for the whole batch.
//
// The mechanism is setrlimit, through util-linux's `prlimit`, run INSIDE the
// sandbox: bwrap … -- prlimit --data=… --nproc=… -- node …. prlimit sets the
// limits on itself and execs the command, so they hold for it and everything
// it starts, and the graceful wrapper (sandbox.ts) still execs bwrap with
// SIGTERM ignored. Why not cgroups for everything: a cgroup v2 with the memory
// and pids controllers is writable only where systemd delegates one or for
// root, and a grading must run the same on an instructor's laptop; rlimits
// need nothing. Why inside bwrap and not around it: RLIMIT_NPROC counts the
// processes of a real user id. Set before bwrap makes its user namespace, it
// becomes that namespace's ceiling for the user's whole session, so an
// instructor with a busy desktop could not start a sandbox at all; set
// inside, the count is the sandbox's own processes (the kernel counts per
// user namespace first).
//
// What each limit holds, and where it does not:
//   memory   RLIMIT_DATA: private writable memory (the V8 heap, Buffers,
//            malloc), close to what the process can make resident. Not
//            RLIMIT_AS: V8 reserves 33 to 44 GB of address space that it never
//            touches (measured, VmPeak of an honest bank server), and below a
//            few GB WebAssembly.Memory() fails outright (2 GB: measured).
//   procs    RLIMIT_NPROC: processes and threads. The kernel does not apply it
//            to a real uid 0, and the sandbox's PID namespace does not count
//            them: graded as root (a CI container), only a pids cgroup bounds
//            them. So where a pids controller is writable (in practice: root),
//            each sandboxed process tree also runs in a cgroup of its own,
//            pids.max = the same number (pidsCgroup below). Root without one:
//            nothing bounds them but the host's pid_max; docs say so.
//   files    RLIMIT_NOFILE: descriptors open at once.
//   fileSize RLIMIT_FSIZE: the largest file it may write (EFBIG; Node ignores
//            SIGXFSZ). Per file: many files still fill a disk.
//   cpu      RLIMIT_CPU: CPU seconds of each process, SIGXCPU at the limit and
//            SIGKILL 5 s later (for one that ignores SIGXCPU).
// No limits without the sandbox (--no-sandbox, a learner's own laptop): the
// code is then one's own or run knowingly, and RLIMIT_NPROC outside a user
// namespace would count the user's whole session. No prlimit (not util-linux,
// not Linux): the sandbox runs without rlimits (only a pids cgroup, if any),
// and says so once on stderr.
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { constants as os } from 'node:os'
import { join, relative } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { findExecutable } from './executables.ts'
import { onCleanup } from './processes.ts'
import { type Phrase, phrases } from './i18n/phrase.ts'

/** Who a verdict is about: the server by name, or "it" where the sentence already named it. */
type Who = 'the server' | 'it'

// What a verdict tells the learner, as templates the packs translate (i18n/<lang>.json, "messages": limits.<key>).
const say = phrases('limits', {
  theServer: 'the server',
  it: 'it',
  change: 'the limit for learner code (LAB_LIMITS={name}=… changes it)',
  heapCap: "{who} ran out of memory: its JavaScript heap grew past {cap}Node's heap cap (--max-old-space-size)",
  capMb: '{cap} MB, ',
  cpu: '{who} used more than {seconds} s of CPU time, {change}',
  fileSize: '{who} wrote a file larger than {mb} MB, {change}',
  memory: '{who} used more than {mb} MB of memory, {change}',
  procs: '{who} started more than {procs} processes or threads, {change}',
  files: '{who} had more than {files} files open at once, {change}',
  crashed: '{who} crashed ({signal}), which is how a process can end when it runs out of memory: {mb} MB, {change}',
})

/** "the limit for learner code (LAB_LIMITS=memory=… changes it)", for the limit called `name` in LAB_LIMITS. */
export const change = (name: string): Phrase => say('change', { name })

/** "it": a verdict's subject where the sentence already named the server. */
export const itSaid = (): Phrase => say('it')

export type Limits = {
  /** MB of private writable memory (RLIMIT_DATA). */
  memoryMb: number
  /** Processes and threads (RLIMIT_NPROC, and pids.max where a pids cgroup is writable). */
  procs: number
  /** Open file descriptors (RLIMIT_NOFILE). */
  files: number
  /** MB, the largest file it may write (RLIMIT_FSIZE). */
  fileSizeMb: number
  /** CPU seconds of each process (RLIMIT_CPU). */
  cpuSeconds: number
}

/**
 * Measured on honest gradings of the reference solutions, sandboxed
 * (`npm run grade -- 5 --solution`, `-- 6 --solution --only histories-6`),
 * sampling /proc/<pid>/status of every bank server; each default is at
 * least 4× the largest honest use.
 */
export const DEFAULT_LIMITS: Readonly<Limits> = {
  /** Honest peak VmData 179 MB (VmHWM, resident, 118 MB; VmPeak, address space, 43.7 GB: hence not RLIMIT_AS). */
  memoryMb: 1024,
  /**
   * Honest peak 26 tasks as a pids cgroup counts them (a stage 6 server's
   * threads, bwrap and its init, tsx's esbuild helper); 14 on stage 5.
   */
  procs: 128,
  /** Honest peak 49 descriptors (stage 6: a pg pool, sockets, the log pipes). */
  files: 1024,
  /** Honest largest file: the SQLite WAL, 0.6 MB (the tsx cache's files are smaller; PostgreSQL's are not learner code). */
  fileSizeMb: 256,
  /** Honest peak 3.1 s of CPU for a server that lived through a whole grade. */
  cpuSeconds: 120,
}

/** How long after SIGXCPU the kernel sends SIGKILL. */
const CPU_GRACE_S = 5

export class LimitsError extends Error {}

const KEYS: Record<string, keyof Limits> = { memory: 'memoryMb', procs: 'procs', files: 'files', filesize: 'fileSizeMb', cpu: 'cpuSeconds' }

/**
 * The instructor's override, read here and nowhere else: LAB_LIMITS, a
 * comma-separated list of name=whole number, each replacing its default:
 *   memory=MB  procs=N  files=N  filesize=MB  cpu=SECONDS
 * e.g. LAB_LIMITS='memory=2048,procs=128'. LAB_LIMITS=off runs without
 * limits. Anything else (an unknown name, a number that is not a whole
 * number ≥ 1, a name twice) is refused with a LimitsError.
 */
export function parseLimits(text: string | undefined): Limits | undefined {
  const spec = text?.trim() ?? ''
  if (spec === '') return { ...DEFAULT_LIMITS }
  if (spec === 'off') return undefined
  const limits = { ...DEFAULT_LIMITS }
  const seen = new Set<string>()
  for (const part of spec.split(',')) {
    const match = /^\s*([a-z]+)\s*=\s*(\d+)\s*$/.exec(part)
    const key = match && KEYS[match[1]!]
    if (!match || !key)
      throw new LimitsError(
        `LAB_LIMITS: "${part.trim()}" is not one of ${Object.keys(KEYS)
          .map((k) => `${k}=N`)
          .join(', ')} (or "off")`,
      )
    const value = Number(match[2])
    if (!Number.isSafeInteger(value) || value < 1) throw new LimitsError(`LAB_LIMITS: ${match[1]} takes a whole number ≥ 1, not ${match[2]}`)
    if (seen.has(key)) throw new LimitsError(`LAB_LIMITS: ${match[1]} is given twice`)
    seen.add(key)
    limits[key] = value
  }
  return limits
}

/** The limits of this grading: the defaults, or LAB_LIMITS; undefined when off. */
export function limitsFromEnv(env: NodeJS.ProcessEnv = process.env): Limits | undefined {
  return parseLimits(env.LAB_LIMITS)
}

let prlimit: { path?: string } | undefined

/** util-linux's prlimit, if this machine has it (probed once). */
export function findPrlimit(): string | undefined {
  prlimit ??= { path: findExecutable('prlimit') }
  return prlimit.path
}

const MB = 1024 * 1024

/** prlimit's options for `limits` (no core dumps either: a killed process writes none). */
export function prlimitArgs(limits: Limits): string[] {
  return [
    `--data=${limits.memoryMb * MB}`,
    `--nproc=${limits.procs}`,
    `--nofile=${limits.files}`,
    `--fsize=${limits.fileSizeMb * MB}`,
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + CPU_GRACE_S}`,
    '--core=0',
  ]
}

/** `command` under `limits`, run by the prlimit at `prlimitPath`. */
export function withLimits(command: string[], limits: Limits, prlimitPath: string): string[] {
  return [prlimitPath, ...prlimitArgs(limits), '--', ...command]
}

/** How a process ended: its exit code or signal, and what it printed. */
export type ProcessEnd = { code?: number | null; signal?: string | null; log?: string }

/**
 * The end of a process from the words ServerProcess uses ("killed by
 * SIGXCPU", "exited with code 152"), in a text that holds them.
 */
export function endFromText(text: string, log = text): ProcessEnd {
  const signal = /\bkilled by (SIG[A-Z0-9]+)/.exec(text)?.[1]
  const code = /\bexited with code (\d+)/.exec(text)?.[1]
  return { signal: signal ?? null, code: code === undefined ? null : Number(code), log }
}

/** Signal numbers to names, the first name of each (SIGABRT, not its alias SIGIOT). */
const SIGNAL_NAMES = new Map<number, string>()
for (const [name, number] of Object.entries(os.signals)) if (!SIGNAL_NAMES.has(number)) SIGNAL_NAMES.set(number, name)

/** The signal that ended it: its own, or bwrap's 128 + n (bwrap exits with that when its command dies of signal n). */
function signalOf(end: ProcessEnd): string | undefined {
  if (end.signal) return end.signal
  if (typeof end.code === 'number' && end.code > 128) return SIGNAL_NAMES.get(end.code - 128)
  return undefined
}

/** The OS refused memory (the memory limit): V8's and Node's words for it, and the C++ runtime's. */
const OUT_OF_MEMORY =
  /Array buffer allocation failed|std::bad_alloc|Cannot allocate memory|\bENOMEM\b|Fatal process out of memory|could not allocate memory|JavaScript heap out of memory|OOMErrorHandler|FatalProcessOutOfMemory/
/** V8 reached its own heap cap (--max-old-space-size), which is not ours. */
const HEAP_CAP = /Reached heap limit|Ineffective mark-compacts near heap limit/
/** An abort in V8's heap code: the tail of the native stack V8 prints when it runs out of memory (its first lines may be cut off). */
const V8_HEAP_FRAME = /v8::internal::Heap::|v8::internal::BackingStore::|v8::ArrayBuffer::New/
/** Also Node's dump of an unhandled spawn error, whose "Error: spawn … EAGAIN" line a log's tail may have cut off: "code: 'EAGAIN'," then "syscall: 'spawn …'". */
const NO_PROCESS =
  /\bspawn(?:Sync)?\b[^\n]*\bEAGAIN\b|\bEAGAIN\b[^\n]*\bspawn(?:Sync)?\b|code: 'EAGAIN',\s*syscall: 'spawn|Cannot fork|fork: Resource temporarily unavailable|(?:uv_thread_create|pthread_create)[^\n]*(?:EAGAIN|Resource temporarily unavailable)/
const TOO_BIG = /\bEFBIG\b|File too large/
const TOO_MANY_FILES = /\bEMFILE\b|Too many open files/i

/** Node's heap cap from NODE_OPTIONS (the roster sets one), in MB. */
const heapCapMb = (env: NodeJS.ProcessEnv = process.env) => Number(/--max-old-space-size=(\d+)/.exec(env.NODE_OPTIONS ?? '')?.[1]) || undefined

/**
 * The limit a process that died ran into, as a sentence ("the server used
 * more than 1024 MB of memory, …"), or undefined when how it ended names
 * none. `limits`: those it ran under (undefined: none, then only Node's own
 * heap cap can be named). Node's heap cap comes first: V8 says "Reached heap
 * limit" for its own cap, and other words when the OS refuses memory. A bare SIGKILL names nothing: the grader's own
 * kills and the kernel's OOM killer send it too.
 */
export function limitVerdict(end: ProcessEnd, limits: Limits | undefined, who: Who = 'the server', env: NodeJS.ProcessEnv = process.env): Phrase | undefined {
  const signal = signalOf(end)
  const log = end.log ?? ''
  const cap = heapCapMb(env)
  const subject = say(who === 'it' ? 'it' : 'theServer')
  if (HEAP_CAP.test(log)) return say('heapCap', { who: subject, cap: cap ? say('capMb', { cap }) : '' })
  if (!limits) return undefined
  if (signal === 'SIGXCPU') return say('cpu', { who: subject, seconds: limits.cpuSeconds, change: change('cpu') })
  if (signal === 'SIGXFSZ' || TOO_BIG.test(log)) return say('fileSize', { who: subject, mb: limits.fileSizeMb, change: change('filesize') })
  if (OUT_OF_MEMORY.test(log) || (signal === 'SIGABRT' && V8_HEAP_FRAME.test(log)))
    return say('memory', { who: subject, mb: limits.memoryMb, change: change('memory') })
  if (NO_PROCESS.test(log)) return say('procs', { who: subject, procs: limits.procs, change: change('procs') })
  if (TOO_MANY_FILES.test(log)) return say('files', { who: subject, files: limits.files, change: change('files') })
  if (signal === 'SIGSEGV' || signal === 'SIGBUS') return say('crashed', { who: subject, signal, mb: limits.memoryMb, change: change('memory') })
  return undefined
}

/** limitVerdict with this grading's limits (LAB_LIMITS), for the reports; a bad LAB_LIMITS names nothing here (the spawn refused it already). */
export function gradingLimitVerdict(end: ProcessEnd, who: Who = 'the server'): Phrase | undefined {
  let limits: Limits | undefined
  try {
    limits = findPrlimit() ? limitsFromEnv() : undefined
  } catch {
    return undefined
  }
  return limitVerdict(end, limits, who)
}

// The pids cgroup: the process limit where RLIMIT_NPROC does not hold (root).
// One cgroup per sandboxed process, <hierarchy>/idem-lab-<grader pid>-<n>
// (no common parent: nothing to leave behind but these), pids.max = the
// limit. The process enters it before bwrap starts (the wrapper's
// `echo $$ > cgroup.procs`, sandbox.ts), so bwrap, its init and
// everything the learner's code starts are counted; a fork or thread past
// pids.max fails with EAGAIN, as past RLIMIT_NPROC. Removed (rmdir: the
// kernel refuses while a process is in it) when the process's exit is seen
// (ServerProcess: releasePidsCgroup), and otherwise by a sweep at the next
// cgroup made and at the grader's exit (an export child: learnerCode.ts only
// waits for it). The sweep at a new cgroup removes the empty ones 30 s old,
// this grader's or another's: made just before its process starts, a
// cgroup is empty for a moment. The one at exit removes all of this
// grader's (their processes were killed a moment before).
//   cgroup v1: the `pids` hierarchy, under the grader's own cgroup in it.
//   cgroup v2: the mount's root, when pids is enabled for its children (root's
//            cgroup.subtree_control, as systemd sets it). A delegated user
//            subtree is not used: a grader that is not root has RLIMIT_NPROC.
// None writable (a grader that is not root, a container without one): no
// cgroup, RLIMIT_NPROC only, as before.

type PidsHierarchy = { version: 1 | 2; base: string }

/** Where idem-lab's cgroups go, when a pids controller is writable here; probed once (undefined: none). */
let hierarchy: { found?: PidsHierarchy } | undefined

/** A grading's cgroup: idem-lab-<grader pid>-<n>, recognisable when left over. */
export const PIDS_CGROUP_NAME = /^idem-lab-(\d+)-\d+$/
/** Another grader's empty cgroup is left alone this long: its process may be about to enter it. */
const FOREIGN_GRACE_MS = 30_000

/** The cgroups this process made and has not removed yet, with when. */
const made = new Map<string, number>()
let madeCount = 0
let sweepsAtExit = false

/** A mount point as /proc/self/mountinfo writes it (\040 for a space, …). */
const unescapeMount = (path: string) => path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)))

const writable = (dir: string) => {
  // The wrapper's script quotes the path in single quotes.
  if (dir.includes("'")) return false
  try {
    accessSync(dir, constants.W_OK)
    return true
  } catch {
    return false
  }
}

/** What findPidsHierarchy reads of the machine (a test gives its own). */
export type CgroupView = { read: (file: string) => string; canWrite: (dir: string) => boolean }

/**
 * The writable pids hierarchy, if any, from /proc/self/mountinfo and
 * /proc/self/cgroup: v2 if pids is enabled for its root's children, else
 * v1's `pids` hierarchy.
 */
export function findPidsHierarchy(view: CgroupView = { read: readText, canWrite: writable }): PidsHierarchy | undefined {
  const mounts = view
    .read('/proc/self/mountinfo')
    .split('\n')
    .flatMap((line) => {
      const [before, after] = line.split(' - ')
      const fields = before?.split(' ') ?? []
      const [type, , options] = after?.split(' ') ?? []
      return fields.length >= 5 && type ? [{ root: unescapeMount(fields[3]!), point: unescapeMount(fields[4]!), type, options: options?.split(',') ?? [] }] : []
    })
  for (const mount of mounts.filter((m) => m.type === 'cgroup2')) {
    const enabled = view.read(join(mount.point, 'cgroup.subtree_control')).split(/\s+/)
    if (enabled.includes('pids') && view.canWrite(mount.point)) return { version: 2, base: mount.point }
  }
  const v1 = mounts.find((m) => m.type === 'cgroup' && m.options.includes('pids'))
  if (!v1) return undefined
  // Under the grader's own cgroup of that hierarchy (a container's, say), where it can be seen from here.
  const own = view
    .read('/proc/self/cgroup')
    .split('\n')
    .map((line) => line.split(':'))
    .find((f) => f[1]?.split(',').includes('pids'))?.[2]
  const inside = own === undefined ? '' : relative(v1.root, own)
  const base = inside && !inside.startsWith('..') ? join(v1.point, inside) : v1.point
  for (const dir of [base, v1.point]) if (view.canWrite(dir)) return { version: 1, base: dir }
  return undefined
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch {
    return ''
  }
}

/** The writable pids hierarchy of this machine (probed once), or undefined. */
export function pidsHierarchy(): PidsHierarchy | undefined {
  hierarchy ??= { found: process.platform === 'linux' ? findPidsHierarchy() : undefined }
  return hierarchy.found
}

/**
 * A new cgroup with pids.max = `procs`, for one sandboxed process to enter,
 * or undefined where no pids controller is writable (or making one failed:
 * then none for the rest of this process).
 */
export function pidsCgroup(procs: number): string | undefined {
  const found = pidsHierarchy()
  if (!found) return undefined
  sweepPidsCgroups()
  const dir = join(found.base, `idem-lab-${process.pid}-${++madeCount}`)
  try {
    mkdirSync(dir)
    if (!sweepsAtExit) sweepsAtExit = !!onCleanup(sweepAtExit)
    made.set(dir, Date.now())
    writeFileSync(join(dir, 'pids.max'), String(procs))
    return dir
  } catch {
    if (made.has(dir)) removeCgroup(dir)
    hierarchy = {}
    return undefined
  }
}

/** rmdir of a cgroup: true once it is gone, false while a process is still in it (EBUSY). */
function removeCgroup(dir: string): boolean {
  try {
    rmdirSync(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return false
  }
  made.delete(dir)
  return true
}

/**
 * Removes `dir` (a cgroup from pidsCgroup) once its processes are gone: its
 * process has exited, and the sandbox's inner processes follow within a
 * moment. Resolves true when removed; false after `withinMs` (then the
 * sweeps try again). Its timer holds the process open: a caller awaits this
 * (a server's stop()), and with an unref'd timer a grader whose last handle
 * was that server would end mid-grade, with status 0 and no verdict.
 */
export async function releasePidsCgroup(dir: string | undefined, withinMs = 5_000): Promise<boolean> {
  if (!dir) return true
  const until = Date.now() + withinMs
  while (!removeCgroup(dir)) {
    if (Date.now() > until) return false
    await sleep(20)
  }
  return true
}

/** Removes the empty idem-lab cgroups: this grader's (`all`: also those made just now), and another's once FOREIGN_GRACE_MS old. */
export function sweepPidsCgroups(all = false): void {
  const now = Date.now()
  for (const dir of leftPidsCgroups('all')) {
    const since = made.get(dir) ?? ctime(dir)
    if ((all && made.has(dir)) || now - since > FOREIGN_GRACE_MS) removeCgroup(dir)
  }
}

const ctime = (dir: string) => {
  try {
    return statSync(dir).ctimeMs
  } catch {
    return Date.now()
  }
}

/** At the grader's exit (its children killed a moment ago): its cgroups, waiting up to 2 s for their last processes. */
function sweepAtExit(): void {
  const until = Date.now() + 2_000
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (;;) {
    sweepPidsCgroups(true)
    if (made.size === 0 || Date.now() > until) break
    Atomics.wait(pause, 0, 0, 20)
  }
}

/** The idem-lab cgroups of the grader `pid` that are still there (every grader's: 'all'). */
export function leftPidsCgroups(pid: number | 'all' = process.pid): string[] {
  const found = pidsHierarchy()
  if (!found) return []
  try {
    return readdirSync(found.base)
      .filter((name) => PIDS_CGROUP_NAME.test(name) && (pid === 'all' || name.startsWith(`idem-lab-${pid}-`)))
      .map((name) => join(found.base, name))
  } catch {
    return []
  }
}
