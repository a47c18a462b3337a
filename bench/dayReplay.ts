// The day replay's speed: `npm run replay -- 5 --solution --json FILE`, timed
// from the outside. The replay tool belongs to another part of the course
// (issue 6); when it is not there the bench says so and goes on.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { repoRoot } from '#harness/paths.ts'
import { track } from '#harness/processes.ts'

export type DayReplay =
  | { skipped: string }
  | {
      command: string
      exitCode: number | null
      /** npm start to exit: start-up, the replay, and judging the ledger. */
      wallMs: number
      /** The replay itself as the tool times it (accounts opened until the last answer). */
      replayMs: number | null
      /** Lines of the day, and attempts really sent (retries that were not needed are skipped). */
      dayLines: number | null
      attempts: number | null
      /** attempts / replayMs, and attempts / wallMs. */
      attemptsPerSecond: number | null
      attemptsPerWallSecond: number | null
      duplicateTransfers: number | null
      lostTransfers: number | null
    }

export async function measureDayReplay(stage: number, log: (line: string) => void): Promise<DayReplay> {
  const scripts = JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8')).scripts ?? {}
  if (!scripts.replay) {
    const skipped = 'skipped: package.json has no "replay" script yet (the day replay of issue 6 is not built)'
    log(`day replay ${skipped}`)
    return { skipped }
  }
  const tmp = mkdtempSync(join(tmpdir(), 'idem-bench-replay-'))
  const jsonFile = join(tmp, 'replay.json')
  const args = ['run', 'replay', '--', String(stage), '--solution', '--json', jsonFile]
  const command = `npm ${args.join(' ')}`
  try {
    log(`${command} ...`)
    const started = performance.now()
    const { code, output } = await run('npm', args)
    const wallMs = Math.round(performance.now() - started)
    let report: Record<string, unknown> = {}
    try {
      report = JSON.parse(readFileSync(jsonFile, 'utf8'))
    } catch {
      log(`the replay wrote no JSON (exit ${code}):\n${output.slice(-1500)}`)
    }
    const num = (v: unknown) => (typeof v === 'number' ? v : null)
    const attempts = num(report.requests)
    const replayMs = num(report.replayMs)
    const result = {
      command,
      exitCode: code,
      wallMs,
      replayMs,
      dayLines: num((report.day as { lines?: unknown } | undefined)?.lines),
      attempts,
      attemptsPerSecond: attempts !== null && replayMs ? (attempts * 1000) / replayMs : null,
      attemptsPerWallSecond: attempts === null ? null : (attempts * 1000) / wallMs,
      duplicateTransfers: num(report.duplicateTransfers),
      lostTransfers: num(report.lostTransfers),
    }
    log(`day replay: ${(wallMs / 1000).toFixed(1)} s, ${attempts ?? '?'} attempts`)
    return result
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(command, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
  track(child)
  let output = ''
  const keep = (c: Buffer) => (output = (output + c).slice(-64 * 1024))
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  return new Promise((resolvePromise, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => resolvePromise({ code, output }))
  })
}
