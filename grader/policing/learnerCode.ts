// Calls a learner's exported function (or reads an exported value) in a child
// process, so that an infinite loop or a crash in learner code fails one check
// instead of hanging the grader.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { deniedSolutionRead } from './copiedAnswers.ts'
import { confinementArgs } from '#harness/confinement.ts'
import { childEnv, onCleanup, signalGroup, track } from '#harness/processes.ts'
import { repoRoot } from '#harness/paths.ts'
import { CheckFailure } from '#harness/failure.ts'
import { exportSandbox, sandboxed } from '#harness/sandbox.ts'
import { startCeilingMs } from '#harness/spawnServer.ts'

const SCRIPT = resolve(repoRoot, 'grader/policing/callExport.ts')
/** Set by each grade(): the grading's data folder (and TMPDIR) when the learner code it calls runs sandboxed. */
let sandboxData: { dataDir: string; tmp?: string } | undefined
export function sandboxExports(data: { dataDir: string; tmp?: string } | undefined) {
  sandboxData = data
}

/** The child's first line, written once tsx runs and before the learner file loads (callExport.ts). */
const READY = 'ready\n'

export type CallResult = { ok: true; value: unknown } | { ok: false; error: string }

/**
 * `inputs` are JSON texts, parsed in the child (JSON.parse('-0') keeps -0 and
 * lone surrogates survive as escapes). With `inputs` null, returns the export itself.
 * `timeoutMs` is the learner code's own time: it starts when the child says
 * it is ready, so a machine slow to start tsx is never "an endless loop".
 */
export async function callLearnerExport(file: string, name: string, inputs: string[] | null, timeoutMs = 5_000): Promise<CallResult[]> {
  const folder = dirname(file)
  // A TMPDIR of its own for tsx's cache.
  const own = exportTmp()
  const env = childEnv({ TMPDIR: own })
  // Sandboxed when the grading is (sandbox.ts); otherwise confined like the
  // stage's server (confinement.ts), so a computed path cannot read solutions/.
  const stage = Number(/^(\d+)-/.exec(basename(folder))?.[1] ?? Number.NaN)
  const permissions = !sandboxData && Number.isInteger(stage) ? confinementArgs({ stage, readable: [folder, SCRIPT], writable: [own], cwd: folder }) : []
  const sandbox = sandboxData ? exportSandbox(file, SCRIPT, sandboxData.dataDir, sandboxData.tmp) : undefined
  const command = sandboxed(sandbox, env, [process.execPath, ...permissions, '--import', 'tsx', SCRIPT])
  const child = spawn(command.file, command.args, {
    cwd: permissions.length ? folder : repoRoot,
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
  const denied = code === null ? undefined : deniedSolutionRead(`stages/${basename(folder)}/${basename(file)}`, err)
  if (denied) throw new CheckFailure(denied)
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

let tmp: string | undefined

/**
 * One private TMPDIR per grader process for the export calls: tsx's cache
 * stays warm from one call to the next (a cold one costs seconds of the
 * call's time limit on a busy machine), and learner code never writes into
 * the cache the grader itself uses.
 */
function exportTmp(): string {
  if (!tmp) {
    const dir = mkdtempSync(join(tmpdir(), 'idem-export-'))
    onCleanup(() => rmSync(dir, { recursive: true, force: true }))
    tmp = dir
  }
  return tmp
}
