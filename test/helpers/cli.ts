// Runs `npm run grade -- ...` as a learner would, in its own process group, with
// TMPDIR pointing at a folder of the test's so the servers it starts carry
// that folder in their LAB_DB (see scratch.ts).
import { spawn, type ChildProcess } from 'node:child_process'
import { commandArgv } from '#harness/commands.ts'
import { repoRoot } from '#harness/paths.ts'

export type CliRun = {
  child: ChildProcess
  /** Everything printed so far (stdout and stderr, in order of arrival). */
  output(): string
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>
}

/**
 * The environment that keeps a developer's language out of a learner command's output a test reads: no
 * locale (LANG=ko_KR.UTF-8 would choose Korean) and, given `home`, a .lab/ of the test's own (a --lang
 * the developer ran is remembered in the course's).
 */
export const inEnglish = (home?: string): Record<string, string> => ({ LC_ALL: 'C', ...(home === undefined ? {} : { LAB_HOME: home }) })

export function startGradeCli(args: string[], tmp: string, command = ['npm', 'run', '--silent', 'grade', '--'], env: Record<string, string> = {}): CliRun {
  const child = spawn(command[0]!, [...command.slice(1), ...args], {
    cwd: repoRoot,
    env: { ...process.env, TMPDIR: tmp, FORCE_COLOR: '0', ...inEnglish(tmp), ...env },
    detached: true, // its own group: a test can send it a terminal's Ctrl-C
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  let all = ''
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c
    all += c
  })
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c
    all += c
  })
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
  return { child, output: () => all, done }
}

export const runGradeCli = (args: string[], tmp: string) => startGradeCli(args, tmp).done

/** The same program without npm in front: for the many short runs that only check arguments. */
export const runCliDirectly = (args: string[], tmp: string) => startGradeCli(args, tmp, commandArgv('grader/cli/grade.ts')).done
