// Running a process as an unprivileged user when the grader is root: a
// container (Gradescope, PrairieLearn, a Docker dev box) starts us as root,
// and PostgreSQL refuses to run as root, while learner code must not run as
// root when there is no bubblewrap sandbox (isolation.ts). `nobody` exists on
// every Linux; setpriv (util-linux) switches to it just before the exec.
import { spawnSync } from 'node:child_process'
import { platform, tmpdir, userInfo } from 'node:os'

/** `nobody`'s uid and gid on Linux. */
export const NOBODY = 65534

export const asRoot = (): boolean => platform() !== 'win32' && userInfo().uid === 0

/**
 * Where folders that `nobody` must reach are made: as root, under /tmp,
 * which everyone can traverse (a TMPDIR may be a folder private to root).
 */
export const reachableTmpBase = (): string => (asRoot() ? '/tmp' : tmpdir())

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
 * kills it if the grader dies first.
 */
export function asNobody(command: { file: string; args: string[] }): { file: string; args: string[] } {
  return { file: 'setpriv', args: [...dropToNobody(), '--pdeathsig=KILL', '--', command.file, ...command.args] }
}
