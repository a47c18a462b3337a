// Calls a learner's exported function (or reads an exported value) in a child
// process, so that an infinite loop or a crash in learner code fails one check
// instead of hanging the grader.
import { spawn } from 'node:child_process'
import { resolve } from 'node:path'
import { childEnv, signalGroup, track } from './processes.ts'
import { repoRoot } from './paths.ts'
import { CheckFailure } from './check.ts'
import { startCeilingMs } from './spawnServer.ts'

/** The child's first line, written once tsx runs and before the learner file loads (callExport.ts). */
const READY = 'ready\n'

export type CallResult = { ok: true; value: unknown } | { ok: false; error: string }

/**
 * `inputs` are JSON texts, parsed in the child (JSON.parse('-0') keeps -0 and
 * lone surrogates survive as escapes). With `inputs` null, returns the export itself.
 * `timeoutMs` is the learner code's own time: it starts when the child says
 * it is ready, so a machine slow to start tsx is never "an endless loop".
 */
export async function callLearnerExport(
  file: string,
  name: string,
  inputs: string[] | null,
  timeoutMs = 5_000,
): Promise<CallResult[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, 'grader/callExport.ts')], {
    cwd: repoRoot,
    detached: true,
    env: childEnv(),
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  track(child)
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => (out += c))
  child.stderr.on('data', (c: Buffer) => (err += c))
  child.stdin.end(JSON.stringify({ file, name, inputs }))
  const kill = () => signalGroup(child, 'SIGKILL')
  const starting = startCeilingMs()
  let ready = false
  let timer = setTimeout(kill, starting)
  child.stdout.on('data', () => {
    if (ready || !out.startsWith(READY)) return
    ready = true
    clearTimeout(timer)
    timer = setTimeout(kill, timeoutMs)
  })
  const code = await new Promise<number | null>((done) => child.once('close', done))
  clearTimeout(timer)
  if (code !== 0)
    throw new CheckFailure(
      code !== null
        ? `loading ${file} failed:\n${err.trim().split('\n').slice(0, 12).join('\n')}`
        : ready
          ? `calling ${name} from ${file} did not finish within ${timeoutMs} ms (an endless loop?)`
          : `the grader's helper process did not start within ${starting / 1000} s (a very busy machine; LAB_START_TIMEOUT_S raises it)`,
    )
  return JSON.parse(out.slice(READY.length)) as CallResult[]
}
