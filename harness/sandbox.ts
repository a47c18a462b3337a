// The trust boundary of grading: the grader is trusted, the code it grades is
// not. Learner code only runs in a bank server or in the short-lived child
// that calls a learner export, and on Linux each of those runs in a
// bubblewrap sandbox (Debian's `bubblewrap`), built here:
//   - its own PID namespace, killed with its init when bwrap's parent goes
//     (--die-with-parent): nothing it starts outlives it, and /proc shows no
//     process of ours (no environ, no fd/1 of the grader's terminal);
//   - no network at all (--unshare-net): the grader reaches the server over a
//     Unix socket in the server's data folder (bank/main.ts, LAB_SOCKET);
//   - a root of its own with read-only binds of exactly what Node needs (the
//     node binary, the system libraries) and what the course runs (bank/,
//     node_modules, package.json, tsconfig.json, the learner's stage folder,
//     the given/ pieces of the earlier stages it builds on), one writable folder for
//     the database files, a private /tmp, and only the environment we give;
//   - resource limits (limits.ts: memory, processes, open files, file size,
//     CPU time), set by prlimit inside the sandbox, LAB_LIMITS to change them;
//     where a pids controller is writable (root), the process also enters a
//     cgroup of its own with pids.max before bwrap starts.
// No solutions/ at all, no other checkout, no HOME, no results.
import { spawnSync } from 'node:child_process'
import { existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { Stage } from './course.ts'
import { course } from './course.ts'
import { findExecutable } from './executables.ts'
import { findPrlimit, type Limits, limitsFromEnv, pidsCgroup, withLimits } from './limits.ts'
import { repoRoot } from './paths.ts'
import { COURSE_RUNTIME, earlierGiven } from './stageReach.ts'

export type SandboxSpec = {
  /** Files and folders it may read, besides Node, the system libraries and the course runtime. */
  readOnly: string[]
  /** Folders it may write (the database folder; it also holds the server's socket). */
  writable: string[]
  /** Its TMPDIR (writable), when kept between gradings; by default one per grading, in the first writable folder. */
  tmp?: string
}

export class SandboxUnavailableError extends Error {}

/** Where bwrap is and whether it can build a sandbox here; probed once. */
let probed: { path?: string; problem?: string } | undefined

export function findBwrap(): { path?: string; problem?: string } {
  if (probed) return probed
  const path = findExecutable('bwrap')
  if (!path) return (probed = { problem: 'bwrap (bubblewrap) is not installed' })
  // Installed is not enough: a container without user namespaces refuses to build one, and one
  // that masks parts of its /proc (Docker, Kubernetes) refuses the sandbox's own /proc: try that too.
  const run = spawnSync(path, ['--unshare-all', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true'], {
    encoding: 'utf8',
    timeout: 10_000,
  })
  if (run.status !== 0) return (probed = { problem: `bwrap cannot build a sandbox here: ${(run.stderr || String(run.error)).trim()}` })
  return (probed = { path })
}

/**
 * Whether this grading runs learner code sandboxed. A roster runs other
 * people's code: it refuses to go on without a sandbox unless told so.
 */
export function sandboxPolicy(o: { roster: boolean; noSandbox: boolean }): boolean {
  if (o.noSandbox) return false
  const { path, problem } = findBwrap()
  if (path) return true
  if (o.roster)
    throw new SandboxUnavailableError(
      `grading a roster runs code you did not write, and it runs in a bubblewrap sandbox: ${problem}.\n` +
        'Install it (sudo apt-get install bubblewrap), or pass --no-sandbox to grade without one, knowingly ' +
        '(docs/instructors.md says what that allows).',
    )
  return false
}

/**
 * What a sandboxed process of a stage may read: the learner's folder and
 * the given/ pieces of the earlier stages, which each stage builds on
 * (confinement.ts allows the same). No solutions/ at all.
 */
export function stageSandbox(stage: Stage, learnerDirs: string[], writable: string[] = []): SandboxSpec {
  return { readOnly: [...learnerDirs, ...earlierGiven(stage.number)], writable }
}
/** System libraries Node links against; /usr/bin, /etc and /home stay out. */
const LIBRARIES = ['/lib', '/lib64', '/usr/lib', '/usr/lib64']

/**
 * What the child that calls a learner export may read: the file's stage
 * folder and the earlier stages' given/ pieces. It may write the grading's data folder,
 * as that grading's servers do (for the shared TMPDIR).
 */
export function exportSandbox(file: string, script: string, dataDir: string, tmp?: string): SandboxSpec {
  const stage = course.stages.find((s) => s.folder === basename(dirname(file)))
  const own = [dirname(file), script]
  return { ...(stage ? stageSandbox(stage, own, [dataDir]) : { readOnly: own, writable: [dataDir] }), tmp }
}

/** Said once per process: a machine without prlimit runs its sandboxes without rlimits. */
let warnedNoPrlimit = false

/**
 * What to spawn, and what holds it: its pids cgroup, if one was made, and the
 * limits in force (memory Infinity where only a cgroup holds it), which a
 * server stuck while starting is read against (limitCounters.ts).
 */
export type SandboxedCommand = { file: string; args: string[]; cgroup?: string; limits?: Limits }

/**
 * The argv that runs `command` with exactly `env`: inside the sandbox when
 * there is a spec, under the grading's resource limits (limits.ts; `limits`
 * replaces LAB_LIMITS and its defaults, null runs without). `graceful`:
 * SIGTERM reaches the command (a server that shuts down cleanly) instead of
 * ending bwrap, and with it everything, at once. `chdir` and `path`: where it
 * starts and its PATH (a `--server` command's own). Without a spec, no limits
 * either: limits.ts says why.
 *
 * `cgroup`: the pids cgroup the process enters before bwrap starts, where a
 * pids controller is writable (limits.ts, pidsCgroup); whoever spawns it
 * removes it at the process's exit (releasePidsCgroup), or the sweeps do.
 * `pidsCgroup: false` never makes one (a test that runs the sandbox as
 * another user, who could not enter it).
 */
export function sandboxed(
  spec: SandboxSpec | undefined,
  env: Record<string, string>,
  command: string[],
  o: { graceful?: boolean; chdir?: string; path?: string; limits?: Limits | null; pidsCgroup?: boolean } = {},
): SandboxedCommand {
  if (!spec) return { file: command[0]!, args: command.slice(1) }
  const bwrap = findBwrap().path
  if (!bwrap) throw new SandboxUnavailableError(findBwrap().problem)
  const limits = o.limits === undefined ? limitsFromEnv() : (o.limits ?? undefined)
  const prlimit = limits && findPrlimit()
  if (limits && !prlimit && !warnedNoPrlimit) {
    warnedNoPrlimit = true
    process.stderr.write('warning: prlimit (util-linux) is not installed: learner code runs sandboxed but without resource limits\n')
  }
  const args = ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL', '--clearenv', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp']
  for (const dir of LIBRARIES.filter((d) => existsSync(d))) {
    // Merged /usr: /lib is a symlink to usr/lib, and must stay one.
    if (lstatSync(dir).isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir)
    else args.push('--ro-bind', dir, dir)
  }
  args.push('--ro-bind', realpathSync(process.execPath), process.execPath)
  // node_modules may be a symlink (a worktree shares one): bind what it points
  // to at the path the code resolves.
  for (const path of [...COURSE_RUNTIME, ...spec.readOnly]) if (existsSync(path)) args.push('--ro-bind', realpathSync(path), path)
  // TMPDIR holds tsx's compile cache: shared by the servers and export
  // children of one grading (or kept for a learner's own runs), so that each
  // does not compile the bank from nothing, which takes seconds on a busy
  // machine. Never the grader's own cache, and never another grading's.
  const tmp = spec.tmp ?? (spec.writable[0] ? join(spec.writable[0], '.tmp') : '/tmp')
  if (tmp !== '/tmp') mkdirSync(tmp, { recursive: true })
  for (const dir of spec.tmp ? [...spec.writable, spec.tmp] : spec.writable) args.push('--bind', realpathSync(dir), dir)
  // HOME is the private /tmp: the host's paths do not exist in there.
  const inside = { ...env, PATH: o.path ?? dirname(process.execPath), HOME: '/tmp', TMPDIR: tmp }
  for (const [name, value] of Object.entries(inside)) args.push('--setenv', name, value)
  // prlimit runs inside, after bwrap made the user namespace (limits.ts says
  // why), and execs the command: the graceful wrapper still execs bwrap.
  if (prlimit) args.push('--ro-bind', realpathSync(prlimit), prlimit)
  args.push('--chdir', o.chdir ?? repoRoot, '--', ...(limits && prlimit ? withLimits(command, limits, prlimit) : command))
  // Made last, when nothing can throw any more before the caller spawns it.
  const cgroup = limits && o.pidsCgroup !== false ? pidsCgroup(limits.procs) : undefined
  // The limits that hold it: set by prlimit, or (processes only) by its cgroup.
  const held = limits && (prlimit || cgroup) ? { limits: prlimit ? limits : { ...limits, memoryMb: Infinity } } : {}
  // Into its cgroup before bwrap starts, so that everything inside counts; a
  // cgroup it cannot enter ends it (125) rather than leave it unbounded.
  const enter = cgroup ? `echo $$ > '${cgroup}/cgroup.procs' || { echo "sandbox: cannot enter the pids cgroup ${cgroup}" >&2; exit 125; }; ` : ''
  if (!o.graceful) return cgroup ? { file: '/bin/sh', args: ['-c', `${enter}exec "$0" "$@"`, bwrap, ...args], cgroup, ...held } : { file: bwrap, args, ...held }
  // bwrap dies of SIGTERM at once and takes the sandbox with it. Ignored
  // (inherited over exec; the server's own handlers replace it), the group's
  // SIGTERM reaches the server's graceful shutdown, and bwrap exits with it.
  // Not for a process without handlers: it would ignore SIGTERM too.
  return { file: '/bin/sh', args: ['-c', `trap "" TERM INT HUP; ${enter}exec "$0" "$@"`, bwrap, ...args], cgroup, ...held }
}
