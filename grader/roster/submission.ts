// Grades one learner's checkout in a grader child process of its own:
// `node harness/launch.mjs grader/cli/grade.ts <stage> --dir <checkout> --seed N --sandbox --json-fd 3`.
// The child never loads learner code (its servers do, sandboxed), and its
// result comes back over a pipe on fd 3: not through a file, which a process
// of the submission might find and rewrite. A socket pair cannot be reopened
// through /proc, and the child's own children do not inherit it.
// `--dir` lays only the manifest's learner files over this course's own copy
// (workspace.ts). Around that, this file adds what a batch needs: a process
// group, a wall-time limit, a memory cap, a stripped environment, and a result
// for every check even when the child never writes one.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { checksOfGrade } from '../checks/index.ts'
import { skippedOnDatabase } from '../engine/check.ts'
import { isRegression, RESULT_SCHEMA, stageScore } from '../engine/gradeResult.ts'
import { isolationOf } from '#harness/isolation.ts'
import type { Stage } from '#harness/course.ts'
import { commandArgv } from '#harness/commands.ts'
import { repoRoot } from '#harness/paths.ts'
import { stopGroup, track } from '#harness/processes.ts'
import { rerunCommand } from '../engine/rerun.ts'
import { CHECKOUT_SERVER_SCRIPT } from '#harness/serverCommand.ts'
import { parseGradeResult, type GradeSummary } from './resultSchema.ts'
import type { Outcome } from './store.ts'
import { leftPidsCgroups, releasePidsCgroup } from '#harness/limits.ts'
import { findMarked, killMarked, type Marked } from './strays.ts'

/**
 * How long a grader child has, after SIGTERM, before SIGKILL: enough to stop
 * its servers (2 s each at most) and its PostgreSQL (5 s at most), then remove
 * the cluster's folder and its overlays. Killed sooner, it leaves them behind.
 * A grader whose event loop is blocked cannot take the signal: it waits this
 * out.
 */
const GRADER_GRACE_MS = 10_000

export type SubmissionOptions = {
  learner: string
  checkout: string
  stage: Stage
  seed: number
  timeLimitMs: number
  /** V8 heap cap of the grader child, in MB. */
  memoryMb: number
  /** A private folder for this submission; removed afterwards. */
  workDir: string
  /** Its servers run sandboxed (the child is told to insist on it). */
  sandbox: boolean
  /** Random histories per histories check, when not the grader's default. */
  histories?: number
}

export type SubmissionResult = {
  learner: string
  checkout: string
  gradedAt: string
  /** 'interrupted': the grader child was stopped by a signal it did not get from us at the time limit; no result, none to store. */
  outcome: Outcome | 'interrupted'
  reason: string
  wallMs: number
  result: GradeSummary
  /** The result file as the grader wrote it (with failure details), when it wrote one. */
  raw?: unknown
}

const LOG_LIMIT = 16 * 1024

export async function gradeSubmission(o: SubmissionOptions): Promise<SubmissionResult> {
  const gradedAt = new Date().toISOString()
  const started = performance.now()
  const home = join(o.workDir, 'home')
  const tmp = join(o.workDir, 'tmp')
  for (const dir of [home, tmp]) mkdirSync(dir, { recursive: true })

  // A checkout with lab-server.sh at its root is a server of its own (CodeCrafters' your_program.sh): graded by running it.
  const ownServer = existsSync(join(o.checkout, CHECKOUT_SERVER_SCRIPT)) ? ['--server', `sh ${CHECKOUT_SERVER_SCRIPT}`] : []
  const [node, ...argv] = commandArgv('grader/cli/grade.ts', [
    String(o.stage.number),
    '--dir',
    o.checkout,
    ...ownServer,
    '--seed',
    String(o.seed),
    o.sandbox ? '--sandbox' : '--no-sandbox',
    ...(o.histories === undefined ? [] : ['--histories', String(o.histories)]),
    '--json-fd',
    '3',
  ])
  const child = spawn(node!, argv, {
    cwd: repoRoot,
    detached: true, // a process group of its own, killed as a whole at the time limit
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    // Nothing of the instructor's environment: no tokens, no real HOME. The
    // private HOME also marks every process this grading starts (strays.ts).
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      TMPDIR: tmp,
      // Not the course's .lab/: a language a learner chose there must not translate the log stored with a result.
      LAB_HOME: join(home, '.lab'),
      NODE_OPTIONS: `--max-old-space-size=${o.memoryMb}`,
      // The instructor's limits for learner code (harness/limits.ts) and start-up ceiling (spawnServer.ts), when set.
      ...pick(process.env, ['LAB_LIMITS', 'LAB_START_TIMEOUT_S']),
    },
  })
  // Interrupted or at its limit, it gets time to stop its servers and its PostgreSQL and remove what they leave.
  track(child, GRADER_GRACE_MS)
  let log = ''
  const keep = (chunk: Buffer) => (log = (log + chunk.toString('utf8')).slice(-LOG_LIMIT))
  child.stdout!.on('data', keep)
  child.stderr!.on('data', keep)
  const resultChunks: Buffer[] = []
  child.stdio[3]!.on('data', (chunk: Buffer) => resultChunks.push(chunk))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })))
  // Output may trail the exit a little; a stray holding the pipe must not stall us.
  const drained = new Promise((done) => child.once('close', done))
  // Only the child holds its end of fd 3: it closes when the child exits.
  const resultEnd = new Promise((done) => child.stdio[3]!.once('close', done))

  let timedOut = false
  let overlays: string[] = []
  const timer = setTimeout(() => {
    timedOut = true
    // Note the overlay folders before the servers that name them are killed:
    // a grader stopped from outside cannot remove its own.
    overlays = overlaysOf(findMarked(home))
    void stopGroup(child, GRADER_GRACE_MS)
  }, o.timeLimitMs)
  const { code, signal } = await exited
  clearTimeout(timer)
  await Promise.race([drained, sleep(500)])
  await Promise.race([resultEnd, sleep(2_000)])
  killMarked(home) // servers and export children the grader could not stop
  // Their pids cgroups (limits.ts, named after the grader's pid): a grader killed at its limit could not remove them.
  await Promise.all(leftPidsCgroups(child.pid).map((dir) => releasePidsCgroup(dir)))
  const written = !timedOut && (code === 0 || code === 1) ? readResult(Buffer.concat(resultChunks).toString('utf8'), o.learner) : undefined
  cleanUp(o.workDir, overlays)
  const wallMs = Math.round(performance.now() - started)
  const base = { learner: o.learner, checkout: o.checkout, gradedAt, wallMs }

  if (timedOut) {
    const reason = `time limit: still running after ${o.timeLimitMs / 1000} s, stopped`
    return { ...base, outcome: 'time limit', reason, result: zeroResult(o, 'timeout', reason, wallMs) }
  }
  if (written && 'result' in written) return { ...base, outcome: 'graded', reason: '', ...written }
  // Interrupted (processes.ts exits with 130 or 143; SIGTERM before it listened): the grading did not finish, whatever it had done.
  if (code === 130 || code === 143 || signal === 'SIGINT' || signal === 'SIGTERM') {
    const reason = `interrupted: the grader ${signal ? `was killed by ${signal}` : `exited with code ${code}`}`
    return { ...base, outcome: 'interrupted', reason, result: zeroResult(o, 'error', reason, wallMs) }
  }
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`
  const reason = `the grader ${how}: ${written?.error ?? lastLines(log)}`
  return { ...base, outcome: 'grader failed', reason, result: zeroResult(o, 'error', reason, wallMs) }
}

function readResult(text: string, learner: string): { result: GradeSummary; raw: unknown } | { error: string } {
  if (!text) return { error: 'it sent no result' }
  try {
    return { result: parseGradeResult(text, learner), raw: JSON.parse(text) }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

/**
 * Every check the stage's grade runs, at 0 points, for a run that produced no
 * result of its own: out of the same most as a finished grade of the stage.
 * Whether its server started is not known. A time limit is the graded code's
 * (it scores 0, as docs/instructors.md says); a grader that failed graded
 * nothing.
 */
function zeroResult(o: SubmissionOptions, status: 'timeout' | 'error', message: string, durationMs: number): GradeSummary {
  const checks = checksOfGrade(o.stage).map(({ check: c, stage: s }) => {
    const regression = isRegression({ stage: s.number }, o.stage.number)
    return skippedOnDatabase(c, o.stage)
      ? {
          id: c.id,
          stage: s.number,
          title: c.title,
          passed: true,
          status: 'skipped' as const,
          points: 0,
          maxPoints: 0,
          message: `skipped: stage ${o.stage.number} keeps its data in PostgreSQL`,
          regression,
        }
      : { id: c.id, stage: s.number, title: c.title, passed: false, status, points: 0, maxPoints: c.points, message, regression }
  })
  return {
    schema: RESULT_SCHEMA,
    stage: o.stage.number,
    slug: o.stage.slug,
    seed: o.seed,
    gradable: status === 'timeout',
    // Whether it started is not known; why the grading ended is each check's message and the run's reason.
    server: { started: null, reason: null },
    refused: null,
    passed: false,
    ...stageScore(o.stage.number, checks),
    // The child's, which decides the same way on the same machine.
    isolation: isolationOf(o.sandbox),
    durationMs,
    rerun: rerunCommand(o.stage.number, o.seed, { kind: 'dir', path: o.checkout }, undefined, { histories: o.histories }),
    checks,
  }
}

function lastLines(log: string, lines = 6): string {
  const text = log.trim()
  return text ? text.split('\n').slice(-lines).join('\n') : '(it printed nothing)'
}

function cleanUp(workDir: string, overlays: string[]) {
  rmSync(workDir, { recursive: true, force: true })
  removeOverlays(overlays)
}

/** The overlay folders servers named (their LAB_STAGE_DIR's parent): for a grader that was killed before it removed its own. */
export const overlaysOf = (marked: Marked[]) => marked.flatMap((m) => (m.stageDir ? [dirname(m.stageDir)] : []))

export function removeOverlays(overlays: string[]) {
  const work = resolve(repoRoot, '.lab', 'work')
  for (const dir of new Set(overlays)) {
    // Only the grader's own overlay folders (.lab/work/run-*), whatever a process claimed.
    if (relative(work, dir) === basename(dir) && basename(dir).startsWith('run-')) rmSync(dir, { recursive: true, force: true })
  }
}

/** The variables of `names` that `env` sets. */
const pick = (env: NodeJS.ProcessEnv, names: string[]) => Object.fromEntries(names.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]!]])))
