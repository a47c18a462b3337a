// Calls a learner's exported function (or reads an exported value, or runs
// an exported SQL query) in a child process, so that an infinite loop, an
// endless query or a crash in learner code fails one check instead of
// hanging the grader. The child runs a bundle of callExport.ts and the
// learner's file (harness/bundle.ts), built once per file per grade and
// started with plain node; it is sandboxed when the grade is, and confined
// like the stage's server otherwise, so a computed path cannot read solutions/.
import { spawn } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join, resolve } from 'node:path'
import { bundle } from '#harness/bundle.mjs'
import { confinementArgs } from '#harness/confinement.ts'
import { CheckFailure } from '#harness/failure.ts'
import { repoRoot } from '#harness/paths.ts'
import { childEnv, onCleanup, signalGroup, track } from '#harness/processes.ts'
import { exportSandbox, sandboxed } from '#harness/sandbox.ts'
import { startCeilingMs } from '#harness/spawnServer.ts'
import { stageReach } from '#harness/stageReach.ts'
import { asNobody, NOBODY, reachableTmpBase } from '#harness/unprivileged.ts'
import type { CallResult, ExportRequest } from './callExport.ts'
import { deniedSolutionRead } from './copiedAnswers.ts'
import { phrases } from '#harness/i18n/phrase.ts'

export type { CallResult } from './callExport.ts'

const SCRIPT = resolve(repoRoot, 'grader/policing/callExport.ts')

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": learnerCode.<key>).
const say = phrases('learnerCode', {
  loadingFailed: 'loading {file} failed:\n{error}',
  runningQuery: 'running the query {name} of {file}',
  calling: 'calling {name} from {file}',
  endless: '{what} did not finish within {timeoutMs} ms (an endless loop?)',
  helperSlow: "the grader's helper process did not start within {seconds} s (a very busy machine; LAB_START_TIMEOUT_S raises it)",
})

/** The child's first line, written before the learner file loads (callExport.ts). */
const READY = 'ready\n'

/** One grade's calls into learner code: its bundles, and where its children may write. */
export class LearnerExports {
  private readonly bundles = new Map<string, Promise<string>>()

  /**
   * `buildDir`: where the bundles go. `sandbox`: the grading's data folder
   * (and TMPDIR) when the learner code it calls runs sandboxed.
   */
  constructor(
    private readonly buildDir: string,
    private readonly sandbox: { dataDir: string; tmp?: string } | undefined,
    /** Without a sandbox, the child runs as nobody (isolation.ts, "user"). */
    private readonly asUser = false,
  ) {}

  /**
   * `timeoutMs` is the learner code's own time: it starts when the child
   * says it is ready, so a machine slow to start a process is never "an
   * endless loop". A query's files must be in the grading's data folder.
   */
  async call(file: string, request: ExportRequest, timeoutMs = 5_000): Promise<CallResult[]> {
    const folder = dirname(file)
    const stage = Number(/^(\d+)-/.exec(basename(folder))?.[1] ?? Number.NaN)
    let built: string
    try {
      built = await this.bundleOf(file, stage)
    } catch (error) {
      throw new CheckFailure(say('loadingFailed', { file, error: (error as Error).message }))
    }
    // A TMPDIR of its own, never the one the grader uses.
    const own = exportTmp(this.asUser)
    const env = childEnv({ TMPDIR: own })
    const files = request.kind === 'query' ? request.files.map(dirname) : []
    // Sandboxed when the grading is (sandbox.ts); otherwise confined like the stage's server (confinement.ts).
    const permissions =
      !this.sandbox && Number.isInteger(stage) ? confinementArgs({ stage, readable: [folder, this.buildDir, ...files], writable: [own], cwd: folder }) : []
    const sandbox = this.sandbox ? exportSandbox(file, this.buildDir, this.sandbox.dataDir, this.sandbox.tmp) : undefined
    const node = [process.execPath, ...permissions, built]
    const command = this.asUser && !sandbox ? asNobody({ file: node[0]!, args: node.slice(1) }) : sandboxed(sandbox, env, node)
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
    child.stdin.end(JSON.stringify(request))
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
    const what = say(request.kind === 'query' ? 'runningQuery' : 'calling', { name: request.name, file })
    if (code !== 0)
      throw new CheckFailure(
        code !== null
          ? say('loadingFailed', { file, error: err.trim().split('\n').slice(0, 12).join('\n') })
          : ready
            ? say('endless', { what, timeoutMs })
            : say('helperSlow', { seconds: starting / 1000 }),
      )
    return JSON.parse(out.slice(READY.length)) as CallResult[]
  }

  /** The file's bundle with callExport.ts, built on first use; it may read only what the file's stage may. */
  private bundleOf(file: string, stage: number): Promise<string> {
    let built = this.bundles.get(file)
    if (!built) {
      built = bundle({
        entry: `import { answerExportRequest } from ${JSON.stringify(SCRIPT)}\nvoid answerExportRequest(() => import(${JSON.stringify(file)}))\n`,
        resolveDir: dirname(file),
        outBase: join(this.buildDir, `export-${this.bundles.size + 1}`),
        readable: stageReach(stage, [dirname(file), SCRIPT]),
      }).then((built) => built.file)
      this.bundles.set(file, built)
    }
    return built
  }
}

const tmps = new Map<boolean, string>()

/**
 * One private TMPDIR per grader process for the export calls: learner code
 * never writes into the grader's own. One of nobody's for the calls run as nobody.
 */
function exportTmp(forNobody: boolean): string {
  let dir = tmps.get(forNobody)
  if (!dir) {
    const made = mkdtempSync(join(forNobody ? reachableTmpBase() : tmpdir(), 'idem-export-'))
    if (forNobody) chownSync(made, NOBODY, NOBODY)
    onCleanup(() => rmSync(made, { recursive: true, force: true }))
    tmps.set(forNobody, (dir = made))
  }
  return dir
}
