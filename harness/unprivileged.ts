// Running a process as an unprivileged user when the grader is root: a
// container (Gradescope, PrairieLearn, a Docker dev box) starts us as root,
// and PostgreSQL refuses to run as root, while learner code must not run as
// root when there is no bubblewrap sandbox (isolation.ts). `nobody` exists on
// every Linux; setpriv (util-linux) switches to it just before the exec.
import { spawnSync } from 'node:child_process'
import { statSync } from 'node:fs'
import { platform, tmpdir, userInfo } from 'node:os'
import { resolve, sep } from 'node:path'

/** `nobody`'s uid and gid on Linux. */
export const NOBODY = 65534

export const asRoot = (): boolean => platform() !== 'win32' && userInfo().uid === 0

/**
 * Where folders that `nobody` must reach are made: as root, TMPDIR when
 * others may pass through every folder on its way (the tests' scratch
 * folders are made so: their leftover checks look there), else /tmp, which
 * everyone can traverse (a TMPDIR may be a folder private to root).
 */
export const reachableTmpBase = (): string => (!asRoot() || traversableByOthers(tmpdir()) ? tmpdir() : '/tmp')

function traversableByOthers(dir: string): boolean {
  const parts = resolve(dir).split(sep).filter(Boolean)
  return parts.every((_, i) => {
    try {
      return (statSync(sep + parts.slice(0, i + 1).join(sep)).mode & 0o001) !== 0
    } catch {
      return false
    }
  })
}

/** setpriv's options that make the command it execs run as nobody, with no supplementary groups. */
export function dropToNobody(): string[] {
  return [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups']
}

/** Whether `file --version` runs as nobody: setpriv is there, and nobody may execute the file (a binary under /root may not be). */
export function runsAsNobody(file: string): boolean {
  return spawnSync('setpriv', [...dropToNobody(), file, '--version'], { stdio: 'ignore' }).status === 0
}

/**
 * `command` run as nobody: setpriv execs it, so signals sent to the group
 * reach the command itself (a server's graceful shutdown), and the kernel
 * kills it if the grader dies first, unless it is meant to outlive the grader
 * (--keep's server).
 */
export function asNobody(command: { file: string; args: string[] }, { outlivesGrader = false } = {}): { file: string; args: string[] } {
  const deathSignal = outlivesGrader ? [] : ['--pdeathsig=KILL']
  return { file: 'setpriv', args: [...dropToNobody(), ...deathSignal, '--', command.file, ...command.args] }
}
