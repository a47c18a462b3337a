// `--server "CMD"`: grade a server of any language that implements CONTRACT.md.
//
// CMD is split like a shell would split it (shell-quote) and run without a
// shell: the process the grader starts is the server itself, so SIGTERM and
// SIGKILL to its group reach it directly, the argv is exactly what the user
// wrote, and a sandbox needs no shell inside. Shell syntax (pipes, &&,
// redirections, globs) is refused with a message: put it in a script and
// pass `sh script.sh`, which is what a roster's lab-server.sh is.
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs'
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path'
import { parse } from 'shell-quote'
import type { SandboxSpec } from './sandbox.ts'

export type ServerCommand = {
  /** As the user wrote it: the rerun line repeats it. */
  line: string
  /** argv[0] resolved to an absolute path on the host's PATH. */
  argv: string[]
  /** Where it runs (relative paths in argv are relative to it). */
  cwd: string
}

export class ServerCommandError extends Error {}

/** A roster checkout whose root holds this file is graded by running it (CodeCrafters' your_program.sh). */
export const CHECKOUT_SERVER_SCRIPT = 'lab-server.sh'

export function parseServerCommand(line: string, cwd: string): ServerCommand {
  const words = parse(line)
  const shellSyntax = words.find((w) => typeof w !== 'string')
  if (shellSyntax)
    throw new ServerCommandError(
      `--server ${JSON.stringify(line)}: shell syntax (${JSON.stringify(shellSyntax)}) is not run; put it in a script and pass "sh script.sh"`,
    )
  const argv = words as string[]
  if (argv.length === 0) throw new ServerCommandError('--server takes the command that starts your server, e.g. --server "python3 examples/python/bank.py"')
  const program = findProgram(argv[0]!, cwd)
  if (!program) throw new ServerCommandError(`--server: ${argv[0]} is not an executable file here or on PATH`)
  return { line, argv: [program, ...argv.slice(1)], cwd }
}

function findProgram(name: string, cwd: string): string | undefined {
  const candidates = name.includes('/') ? [resolve(cwd, name)] : (process.env.PATH ?? '/usr/bin:/bin').split(delimiter).map((d) => join(d, name))
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK)
      return statSync(file).isFile()
    } catch {
      return false
    }
  })
}

/** The system's programs and libraries: an interpreter and the shell a script starts with. */
const SYSTEM = ['/usr', '/bin', '/sbin']

/**
 * What a foreign server may read in the sandbox, besides the data folder it
 * writes: the system's programs, the installation its program comes from
 * (the folder above its bin/, e.g. a pyenv version or /usr/local), and the
 * folders of the files its arguments name (the example's folder, a
 * checkout). Never the course, never a home directory beyond that.
 */
export function commandSandbox(spec: SandboxSpec, command: ServerCommand): SandboxSpec & { path: string } {
  const program = realpathSync(command.argv[0]!)
  const installation = dirname(dirname(program))
  const named = command.argv
    .slice(1)
    .map((arg) => resolve(command.cwd, arg))
    .filter((path) => !path.startsWith('/dev') && existsSync(path))
    .map((path) => (statSync(path).isDirectory() ? path : dirname(path)))
  const readOnly = [...SYSTEM, installation, ...named].filter((p) => isAbsolute(p) && existsSync(p))
  const path = [dirname(command.argv[0]!), dirname(program), '/usr/local/bin', '/usr/bin', '/bin'].join(':')
  return { ...spec, readOnly: [...spec.readOnly, ...new Set(readOnly)], path }
}
