// The learner's loop, timed: per stage, a full grade against --no-regression
// (each in a fresh process, as `npm run grade` runs), and in watch mode the
// time from saving a file to the first check's verdict and to the whole
// verdict. Watch runs on a temporary --dir checkout holding the reference
// solutions up to that stage, so the bench never writes to the course's own files.
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { commandArgv } from '#harness/commands.ts'
import { commandBundle } from '#harness/launch.mjs'
import { course, stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { signalGroup, track } from '#harness/processes.ts'
import { runProbe } from './grading.ts'

export type LoopStage = {
  stage: number
  /** grade() of the full grade and of --no-regression, and their wall times with process start-up. */
  fullGradeMs: number
  noRegressionGradeMs: number
  fullWallMs: number
  noRegressionWallMs: number
  /** Server processes each of those grades spawned. */
  fullStarts: number
  noRegressionStarts: number
  /** Watch mode: from writing the file to the first check's ✓/✗, and to the PASSED/FAILED line. */
  saveToFirstCheckMs: number
  saveToVerdictMs: number
  passed: boolean
  /** What failed, per run ("full: id", "no-regression: id", "watch: ✗ line"): a loaded machine shows here first. */
  failed: string[]
}

/** Each stage's full grade over stage 0's, measured in the same run (wall time, process start included). */
export type Loop = { seed: number; stages: LoopStage[]; ratiosToStage0: Record<number, number> }

export async function measureLoop(stages: number[], seed: number, log: (line: string) => void): Promise<Loop> {
  // Compiled before the first timed run (harness/launch.mjs): a learner's first command after a
  // change pays for that once, and the first stage measured must not carry it for the others.
  await Promise.all(['bench/gradeProbe.ts', 'grader/cli/watch.ts'].map(commandBundle))
  const results: LoopStage[] = []
  for (const stage of stages) {
    const timed = async (noRegression: boolean) => {
      const t0 = performance.now()
      const probe = await runProbe(stage, seed, noRegression)
      return { ...probe, wallMs: Math.round(performance.now() - t0) }
    }
    const full = await timed(false)
    const narrow = await timed(true)
    const watch = await saveToVerdict(stage, seed)
    const result: LoopStage = {
      stage,
      fullGradeMs: full.gradeMs,
      noRegressionGradeMs: narrow.gradeMs,
      fullWallMs: full.wallMs,
      noRegressionWallMs: narrow.wallMs,
      fullStarts: full.serverStarts,
      noRegressionStarts: narrow.serverStarts,
      ...watch,
      passed: full.passed && narrow.passed && watch.passed,
      failed: [...full.failed.map((id) => `full: ${id}`), ...narrow.failed.map((id) => `no-regression: ${id}`), ...watch.failed.map((l) => `watch: ${l}`)],
    }
    results.push(result)
    log(
      `loop ${stage}: full ${(full.wallMs / 1000).toFixed(1)} s, --no-regression ${(narrow.wallMs / 1000).toFixed(1)} s, ` +
        `watch: save → first check ${(watch.saveToFirstCheckMs / 1000).toFixed(1)} s, → verdict ${(watch.saveToVerdictMs / 1000).toFixed(1)} s`,
    )
  }
  const base = results.find((r) => r.stage === 0)?.fullWallMs
  const ratiosToStage0 = base ? Object.fromEntries(results.map((r) => [r.stage, Math.round((r.fullWallMs / base) * 100) / 100])) : {}
  return { seed, stages: results, ratiosToStage0 }
}

/** Starts `npm run watch` on a solved checkout, waits for its first verdict, saves a learner file, times the regrade. */
async function saveToVerdict(stageNumber: number, seed: number): Promise<Pick<LoopStage, 'saveToFirstCheckMs' | 'saveToVerdictMs' | 'passed' | 'failed'>> {
  const stage = stageByNumber(stageNumber)
  const checkout = mkdtempSync(join(tmpdir(), 'idem-bench-loop-'))
  // Solved up to this stage: the regression checks call earlier stages' learner files too.
  for (const s of course.stages.filter((s) => s.number <= stageNumber)) {
    mkdirSync(join(checkout, 'stages', s.folder), { recursive: true })
    for (const file of s.edits) cpSync(resolve(repoRoot, 'solutions', s.folder, file), join(checkout, 'stages', s.folder, file))
  }
  const folder = join(checkout, 'stages', stage.folder)
  const [node, ...argv] = commandArgv('grader/cli/watch.ts', [String(stageNumber), '--dir', checkout, '--seed', String(seed)])
  const child = spawn(node!, argv, {
    cwd: repoRoot,
    env: { ...process.env, FORCE_COLOR: '0' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  track(child)
  let out = ''
  child.stdout.on('data', (c: Buffer) => (out += c))
  child.stderr.on('data', (c: Buffer) => (out += c))
  const until = async (test: () => boolean) => {
    while (!test()) {
      if (child.exitCode !== null) throw new Error(`watch exited:\n${out.slice(-2000)}`)
      await sleep(10)
    }
    return performance.now()
  }
  try {
    await until(() => out.includes('\nwatching '))
    const before = out.length
    const file = join(folder, stage.edits.at(-1)!)
    const saved = performance.now()
    writeFileSync(file, readFileSync(file)) // a save with nothing changed: the regrade is the whole cost
    const after = () => out.slice(before)
    const firstCheck = await until(() => /^ {2}[✓✗] /m.test(after()))
    const verdict = await until(() => /^(PASSED|FAILED) /m.test(after()))
    return {
      saveToFirstCheckMs: Math.round(firstCheck - saved),
      saveToVerdictMs: Math.round(verdict - saved),
      passed: /^PASSED /m.test(after()),
      failed: after()
        .split('\n')
        .filter((l) => l.startsWith('  ✗ '))
        .map((l) => l.trim()),
    }
  } finally {
    const exited = new Promise((done) => child.once('exit', done))
    signalGroup(child, 'SIGINT')
    await exited
    rmSync(checkout, { recursive: true, force: true })
  }
}
