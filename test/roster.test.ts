// Grading a class: a roster made from the course itself (untouched, fully
// solved, solved up to stage 2, a known-wrong implementation, one that hangs)
// graded in one command, ranked by `npm run scores`, with the hanging one held
// to its own time limit and nothing left running afterwards.
import { spawn } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { course, stageByNumber, type Stage } from '#grader/course.ts'
import { mutants } from '#grader/mutants/index.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { repoRoot } from '#grader/paths.ts'
import { leftoverAfter, processesWithMarker } from './helpers/procs.ts'
import { scratchDir } from './helpers/scratch.ts'

/** The highest stage that has a starter, a solution and checks (stage 5 once the course is complete). */
const top: Stage = [...course.stages]
  .reverse()
  .find((s) => ['stages', 'solutions'].every((root) => existsSync(resolve(repoRoot, root, s.folder))) && checksFor(s.number).length > 0)!

type RosterJson = {
  seed: number
  wallMs: number
  submissions: Array<{ learner: string; outcome: string; reason: string; wallMs: number; result: { score: number; maxScore: number; checks: Array<{ id: string; status: string; points: number; message: string }> } }>
}

/** Runs `npm run <script> -- args` with TMPDIR inside the test's scratch folder (the marker of everything it starts). */
function npm(tmp: string, script: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn('npm', ['run', '--silent', script, '--', ...args], { cwd: repoRoot, env: { ...process.env, TMPDIR: tmp, FORCE_COLOR: '0' } })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c))
    child.stderr.on('data', (c: Buffer) => (out += c))
    child.on('close', (code) => done({ code, out }))
  })
}

// --- checkouts, made from this course ---------------------------------------

function checkout(roster: string, learner: string, solvedUpTo = -1): string {
  const dir = join(roster, learner)
  cpSync(resolve(repoRoot, 'stages'), join(dir, 'stages'), { recursive: true })
  for (const s of course.stages.filter((s) => s.number <= solvedUpTo))
    cpSync(resolve(repoRoot, 'solutions', s.folder), join(dir, 'stages', s.folder), { recursive: true })
  return dir
}

/** Solved, except for one known-wrong implementation of the top stage; returns the check it must fail. */
function mutantCheckout(roster: string): { learner: string; mustFail: string } {
  const dir = checkout(roster, 'mutant', top.number)
  const mutant = mutants.find((m) => m.stage === top.number)
  if (mutant) {
    const made = materialize(mutant)
    cpSync(join(made, 'stages'), join(dir, 'stages'), { recursive: true })
    rmSync(made, { recursive: true, force: true })
    return { learner: 'mutant', mustFail: mutant.mustFail }
  }
  // Stage 0 has no mutants: a query whose window is 6 s instead of 60 s.
  const file = join(dir, 'stages', stageByNumber(0).folder, 'suspectedDuplicates.ts')
  const text = readFileSync(file, 'utf8')
  expect(text.split('60.0 / 86400').length, 'the solution query still has its 60 s window').toBe(2)
  writeFileSync(file, text.replace('60.0 / 86400', '6.0 / 86400'))
  return { learner: 'mutant', mustFail: 'suspected-duplicates' }
}

/** The stage-0 query that never finishes: SQLite counts forever and the grader's event loop with it. */
const ENDLESS_QUERY = 'export const SUSPECTED_DUPLICATES_SQL = `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x AS id FROM n WHERE x < 0`\n'

/** Solved, but the graded stage never answers a money POST (or, at stage 0, the query never ends). */
function hangingCheckout(roster: string, learner: string, stage: Stage) {
  const dir = checkout(roster, learner, stage.number)
  if (stage.edits.includes('idempotency.ts'))
    writeFileSync(join(dir, 'stages', stage.folder, 'idempotency.ts'), "export const createLayer = () => ({ handle: () => new Promise<never>(() => {}) })\n")
  else writeFileSync(join(dir, 'stages', stage.folder, 'suspectedDuplicates.ts'), ENDLESS_QUERY)
}

// --- the tests ----------------------------------------------------------------------

// Far above an honest stage-5 grade (about 25 s alone, 40 s on a busy
// machine): six times the quiet figure, so a slow machine is never "time limit".
const TIME_LIMIT_S = 150
/** The hanging checkout alone costs TIME_LIMIT_S: the test's own timeout leaves room for it and the rest. */
const ROSTER_TEST_TIMEOUT_MS = (TIME_LIMIT_S + 300) * 1000
// Three at a time on two cores: the hanging checkout holds a slot but no core
// (its server waits forever), so two honest grades still run side by side.
const JOBS = 3

describe(`npm run grade -- ${top.number} --roster`, () => {
  it('grades a class in one command; npm run scores ranks solved > up to stage 2 > untouched; the hanging one costs only its time limit', async () => {
    const scratch = scratchDir('roster')
    try {
      const roster = join(scratch.path, 'class')
      checkout(roster, 'untouched')
      checkout(roster, 'solved', top.number)
      checkout(roster, 'upto2', 2)
      const mutant = mutantCheckout(roster)
      hangingCheckout(roster, 'hangs', top)
      const store = join(scratch.path, 'grades.sqlite')
      const json = join(scratch.path, 'roster.json')

      const graded = await npm(scratch.path, 'grade', [String(top.number), '--roster', roster, '--store', store, '--json', json, '--time-limit', String(TIME_LIMIT_S), '--jobs', String(JOBS)])
      console.log(graded.out)
      expect(graded.code, graded.out).toBe(0)
      const report = JSON.parse(readFileSync(json, 'utf8')) as RosterJson
      const by = Object.fromEntries(report.submissions.map((s) => [s.learner, s]))
      const context = `seed ${report.seed}:\n${graded.out}`
      expect(Object.keys(by).sort(), context).toEqual(['hangs', 'mutant', 'solved', 'untouched', 'upto2'])

      // The hanging checkout: stopped by its limit (not by finishing: it never
      // would), every check 0 with the reason.
      const hang = by.hangs!
      expect(hang.outcome, context).toBe('time limit')
      expect(hang.wallMs).toBeGreaterThanOrEqual(TIME_LIMIT_S * 1000)
      expect(hang.result.checks.length).toBe(course.stages.filter((s) => s.number <= top.number).reduce((n, s) => n + checksFor(s.number).length, 0))
      for (const c of hang.result.checks) expect(c, c.id).toMatchObject({ status: 'timeout', points: 0, message: expect.stringMatching(/^time limit/) })
      // Left alone, its checks would have timed out one by one, past the limit:
      // so the verdict above is the limit's doing.
      const unlimitedMs = course.stages.filter((s) => s.number <= top.number).flatMap((s) => checksFor(s.number)).reduce((n, c) => n + c.timeoutMs, 0)
      if (top.edits.includes('idempotency.ts')) expect(unlimitedMs).toBeGreaterThan(2 * TIME_LIMIT_S * 1000)
      for (const s of report.submissions.filter((s) => s.learner !== 'hangs')) expect(s.outcome, `${s.learner}: ${s.reason}`).toBe('graded')

      // Nothing the batch started is still running, and its temp folders are gone.
      const left = await leftoverAfter(() => processesWithMarker(scratch.path))
      expect(left.map((p) => `${p.pid} ${p.cmdline}`)).toEqual([])
      expect(readdirSync(scratch.path).filter((f) => f.startsWith('idem-roster-'))).toEqual([])

      // The ranking, as the instructor reads it.
      const csv = join(scratch.path, 'out.csv')
      const scores = await npm(scratch.path, 'scores', ['--store', store, '--csv', csv])
      expect(scores.code, scores.out).toBe(0)
      const [header, ...rows] = readFileSync(csv, 'utf8').trimEnd().split('\n').map((line) => line.split(','))
      const total = (learner: string) => Number(rows.find((r) => r[0] === learner)![header!.indexOf('total')])
      const rank = (learner: string) => rows.findIndex((r) => r[0] === learner)
      const max = by.solved!.result.maxScore
      expect(total('solved'), context).toBe(max)
      expect(rank('solved')).toBe(0)
      expect(rank('solved')).toBeLessThan(rank('upto2'))
      expect(rank('upto2')).toBeLessThan(rank('untouched'))
      expect(rank('untouched')).toBeLessThan(rank('hangs'))
      if (top.number > 2) expect(total('upto2'), context).toBeLessThan(max)
      expect(total('upto2'), context).toBeGreaterThan(total('untouched'))
      expect(total('untouched'), context).toBeGreaterThan(0)
      expect(total('hangs')).toBe(0)
      // The known-wrong implementation loses exactly where it must.
      const mustFailColumn = header!.findIndex((h) => h.endsWith(`:${mutant.mustFail}`))
      expect(mustFailColumn).toBeGreaterThan(0)
      expect(Number(rows[rank('mutant')]![mustFailColumn]), context).toBe(0)
      expect(total('mutant')).toBeLessThan(max)
      expect(scores.out).toMatch(new RegExp(`seed ${report.seed} .*npm run grade -- ${top.number} --seed ${report.seed} --dir ${roster}/solved`))
    } finally {
      scratch.dispose()
    }
  }, ROSTER_TEST_TIMEOUT_MS)

  it('a checkout that blocks the grader itself is killed at its limit, and so is every server its grader started', async () => {
    const scratch = scratchDir('roster-stuck')
    try {
      const roster = join(scratch.path, 'class')
      mkdirSync(roster)
      hangingCheckout(roster, 'stuck', stageByNumber(0))
      const store = join(scratch.path, 'grades.sqlite')
      const json = join(scratch.path, 'roster.json')
      // Long enough to reach the query (the last stage-0 check, about 2 s in
      // on a quiet machine) on a machine many times slower.
      const limitS = 30
      const graded = await npm(scratch.path, 'grade', ['0', '--roster', roster, '--store', store, '--json', json, '--time-limit', String(limitS)])
      expect(graded.code, graded.out).toBe(0)
      const [stuck] = (JSON.parse(readFileSync(json, 'utf8')) as RosterJson).submissions
      expect(stuck, graded.out).toMatchObject({ learner: 'stuck', outcome: 'time limit', result: { score: 0 } })
      // Its grader could not answer SIGTERM (the query holds its event loop):
      // it took the SIGKILL a second later, and its server had to be found and
      // killed from outside.
      expect(stuck!.wallMs, 'stopped by SIGKILL after the 1 s grace').toBeGreaterThanOrEqual(limitS * 1000 + 900)
      const left = await leftoverAfter(() => processesWithMarker(scratch.path))
      expect(left.map((p) => `${p.pid} ${p.cmdline}`)).toEqual([])
    } finally {
      scratch.dispose()
    }
  })
})
