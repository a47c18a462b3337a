// How long a learner waits for `npm run grade -- N --solution`, and how much
// memory the grader takes. Each stage is graded in a fresh process (startup
// included, as a learner experiences it); grading stage N also runs every
// earlier stage's checks, so stage 5 is the whole course.
import { spawn } from 'node:child_process'
import { commandArgv } from '#harness/commands.ts'
import { repoRoot } from '#harness/paths.ts'
import { track } from '#harness/processes.ts'

export type StageGrade = {
  stage: number
  passed: boolean
  score: number
  maxScore: number
  checks: number
  failed: string[]
  /** Process start to exit, the command's start-up included. */
  wallMs: number
  /** grade() itself, as GradeResult.durationMs reports it. */
  gradeMs: number
  /** Server processes the grade spawned (GradeResult.serverStarts). */
  serverStarts: number
  maxRssMb: number
}

export type Grading = { seed: number; stages: StageGrade[]; peakRssMb: number }

export async function measureGrading(stages: number[], seed: number, log: (line: string) => void): Promise<Grading> {
  const results: StageGrade[] = []
  for (const stage of stages) {
    const started = performance.now()
    const probe = await runProbe(stage, seed)
    const result = { stage, ...probe, wallMs: Math.round(performance.now() - started) }
    results.push(result)
    log(
      `grade ${stage} --solution --seed ${seed}: ${result.passed ? 'passed' : `FAILED (${result.failed.join(', ')})`}, ` +
        `${(result.wallMs / 1000).toFixed(1)} s, ${result.maxRssMb.toFixed(0)} MB`,
    )
  }
  return { seed, stages: results, peakRssMb: Math.max(...results.map((r) => r.maxRssMb)) }
}

export function runProbe(stage: number, seed: number, noRegression = false): Promise<Omit<StageGrade, 'stage' | 'wallMs'>> {
  const [node, ...argv] = commandArgv('bench/gradeProbe.ts', [String(stage), String(seed), ...(noRegression ? ['no-regression'] : [])])
  const child = spawn(node!, argv, {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  track(child)
  let out = ''
  let err = ''
  child.stdout.on('data', (c: Buffer) => (out += c))
  child.stderr.on('data', (c: Buffer) => (err += c))
  return new Promise((resolvePromise, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? ''
      try {
        resolvePromise(JSON.parse(last))
      } catch {
        reject(new Error(`grading stage ${stage} (exit ${code}) printed no result:\n${(out + err).slice(-2000)}`))
      }
    })
  })
}
