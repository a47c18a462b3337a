// Calls a learner's exported function (or reads an exported value) in a child
// process, so that an infinite loop or a crash in learner code fails one check
// instead of hanging the grader.
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { childEnv, signalGroup, track } from './processes.ts'
import { repoRoot } from './paths.ts'
import { CheckFailure } from './check.ts'
import { exportSandbox, sandboxed } from './sandbox.ts'

const SCRIPT = resolve(repoRoot, 'grader/callExport.ts')
/** Set by each grade(): the grading's data folder (and TMPDIR) when the learner code it calls runs sandboxed. */
let sandboxData: { dataDir: string; tmp?: string } | undefined
export function sandboxExports(data: { dataDir: string; tmp?: string } | undefined) {
  sandboxData = data
}

export type CallResult = { ok: true; value: unknown } | { ok: false; error: string }

/**
 * `inputs` are JSON texts, parsed in the child (JSON.parse('-0') keeps -0 and
 * lone surrogates survive as escapes). With `inputs` null, returns the export itself.
 */
export async function callLearnerExport(
  file: string,
  name: string,
  inputs: string[] | null,
  timeoutMs = 5_000,
): Promise<CallResult[]> {
  const env = childEnv()
  const command = sandboxed(sandboxData ? exportSandbox(file, SCRIPT, sandboxData.dataDir, sandboxData.tmp) : undefined, env, [process.execPath, '--import', 'tsx', SCRIPT])
  const child = spawn(command.file, command.args, {
    cwd: repoRoot,
    detached: true,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  track(child)
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => (out += c))
  child.stderr.on('data', (c: Buffer) => (err += c))
  child.stdin.end(JSON.stringify({ file, name, inputs }))
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), timeoutMs)
  const code = await new Promise<number | null>((done) => child.once('close', done))
  clearTimeout(timer)
  if (code !== 0)
    throw new CheckFailure(
      code === null
        ? `calling ${name} from ${file} did not finish within ${timeoutMs} ms (an endless loop?)`
        : `loading ${file} failed:\n${err.trim().split('\n').slice(0, 12).join('\n')}`,
    )
  return JSON.parse(out) as CallResult[]
}
