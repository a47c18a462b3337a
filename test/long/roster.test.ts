// Grading a class: a roster made from the course itself (untouched, stages
// 0-3 solved, every stage solved, solved but hanging at the last stage) graded
// in one command, each stage of each checkout on its own folder; `npm run
// scores` gives one row per learner and one column per stage. Nothing the
// batch starts outlives it.
import { spawn } from 'node:child_process'
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { course, stageByNumber, type Stage } from '#harness/course.ts'
import { maxScoreOfGrade } from '#grader/checks/index.ts'
import { repoRoot } from '#harness/paths.ts'
import { expectNothingLeft } from '../helpers/leftovers.ts'
import { scratchDir } from '../helpers/scratch.ts'

const last: Stage = course.stages.at(-1)!

type StageEntry = {
  stage: number
  outcome: string
  reason: string
  result: { score: number; maxScore: number; checks: Array<{ id: string; stage: number; status: string; points: number; maxPoints: number; message: string }> }
}
type RosterJson = { seed: number; stages: number[]; submissions: Array<{ learner: string; stages: StageEntry[] }> }

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

/** A stage's own checks in a run that graded it: what its column counts. */
const own = (e: StageEntry) => e.result.checks.filter((c) => c.stage === e.stage)
const passesOwn = (e: StageEntry) => own(e).length > 0 && own(e).every((c) => c.status === 'pass')
const ownScore = (e: StageEntry) => own(e).reduce((n, c) => n + c.points, 0)

// --- checkouts, made from this course ---------------------------------------

function checkout(roster: string, learner: string, solvedUpTo = -1): string {
  const dir = join(roster, learner)
  cpSync(resolve(repoRoot, 'stages'), join(dir, 'stages'), { recursive: true })
  for (const s of course.stages.filter((s) => s.number <= solvedUpTo))
    cpSync(resolve(repoRoot, 'solutions', s.folder), join(dir, 'stages', s.folder), { recursive: true })
  return dir
}

/** Solved, but the graded stage never answers a money POST. */
function hangingCheckout(roster: string, learner: string, stage: Stage) {
  const dir = checkout(roster, learner, stage.number)
  writeFileSync(join(dir, 'stages', stage.folder, 'idempotency.ts'), 'export const createLayer = () => ({ handle: () => new Promise<never>(() => {}) })\n')
}

// --- the tests ----------------------------------------------------------------------

// Far above an honest grade of one stage (about 45 s alone at stage 5, most
// of it waiting on leases and TTLs; at load average 20 a stage 3-5 grade took
// more than 150 s), so a slow machine is never "time limit"; the hanging
// checkout alone costs this much.
const TIME_LIMIT_S = 420
// Stage 0 (a query, not a layer), the last stage upto3 solves and the first
// it does not (so each stage is graded on its own folder), and the last (on
// PostgreSQL, where hangs hangs). Every other stage would add four grades and
// prove nothing more here: each solution's grade is the stage tests' work.
const STAGES = [0, 3, 4, last.number]
// 16 grades, three at a time: all 28 of the seven stages took 670-1012 s at
// load average 8-15; the test allows about three times that.
const ROSTER_TEST_TIMEOUT_MS = 1800 * 1000
const JOBS = 3
const HISTORIES = 5

describe('npm run grade -- 0,3,4,6 --roster', () => {
  it(
    'grades each listed stage of every checkout on its own folder: untouched scores only starter scores, 0-3 solved passes exactly 0-3, solved passes all, hanging keeps its other stages',
    async () => {
      const scratch = scratchDir('roster')
      try {
        const roster = join(scratch.path, 'class')
        checkout(roster, 'untouched')
        checkout(roster, 'upto3', 3)
        checkout(roster, 'solved', last.number)
        hangingCheckout(roster, 'hangs', last)
        const store = join(scratch.path, 'grades.sqlite')
        const json = join(scratch.path, 'roster.json')

        const graded = await npm(scratch.path, 'grade', [
          STAGES.join(','),
          '--roster',
          roster,
          '--store',
          store,
          '--json',
          json,
          '--time-limit',
          String(TIME_LIMIT_S),
          '--jobs',
          String(JOBS),
          // The tour of motifs only: this test is about the roster, and a whole class's 30 histories per stage cost minutes.
          '--histories',
          String(HISTORIES),
        ])
        console.log(graded.out)
        expect(graded.code, graded.out).toBe(0)
        const report = JSON.parse(readFileSync(json, 'utf8')) as RosterJson
        // On failure: why each stage that did not pass its own checks failed (first failing check).
        const why = report.submissions.flatMap((sub) =>
          sub.stages
            .filter((e) => !passesOwn(e))
            .map(
              (e) =>
                `${sub.learner} stage ${e.stage}: ${
                  own(e)
                    .find((c) => c.status !== 'pass')
                    ?.message.split('\n')[0] ?? e.reason
                }`,
            ),
        )
        const context = `seed ${report.seed}:\n${graded.out}\n${why.join('\n')}`
        expect(report.stages).toEqual(STAGES)
        const by = Object.fromEntries(report.submissions.map((s) => [s.learner, new Map(s.stages.map((e) => [e.stage, e]))]))
        expect(Object.keys(by).sort()).toEqual(['hangs', 'solved', 'untouched', 'upto3'])
        for (const [learner, stages] of Object.entries(by)) expect([...stages.keys()].sort(), learner).toEqual(report.stages)
        const passing = (learner: string) => report.stages.filter((n) => passesOwn(by[learner]!.get(n)!))

        // Only the learner's own work counts: the given earlier layers earn nothing.
        expect(passing('untouched'), context).toEqual([])
        expect(passing('upto3'), context).toEqual(STAGES.filter((n) => n <= 3))
        expect(passing('solved'), context).toEqual(report.stages)
        expect(passing('hangs'), context).toEqual(report.stages.filter((n) => n !== last.number))
        for (const n of report.stages) expect(by.solved!.get(n)!.outcome, `solved stage ${n}`).toBe('graded')
        // Finished or stopped at its limit, a stage's grade is out of the most the stage READMEs print.
        for (const sub of report.submissions)
          for (const e of sub.stages) expect(e.result.maxScore, `${sub.learner} stage ${e.stage}`).toBe(maxScoreOfGrade(stageByNumber(e.stage)))
        // The untouched stages of upto3 are the same starters, graded with the same seed: the same scores.
        for (const n of [4, 5].filter((n) => report.stages.includes(n))) expect(ownScore(by.upto3!.get(n)!), `stage ${n}`).toBe(ownScore(by.untouched!.get(n)!))
        // The hanging stage earns nothing, whether its checks timed out or its limit stopped it.
        const hung = by.hangs!.get(last.number)!
        expect(ownScore(hung), context).toBe(0)
        for (const c of own(hung)) expect(c.status, c.id).not.toBe('pass')

        // Nothing the batch started is still running, and its temp folders are gone.
        await expectNothingLeft('left behind by the batch', scratch.path)

        // npm run scores: one row per learner, one column per stage, each the stage's own points.
        const csv = join(scratch.path, 'out.csv')
        const scores = await npm(scratch.path, 'scores', ['--store', store, '--csv', csv])
        expect(scores.code, scores.out).toBe(0)
        const [header, ...rows] = readFileSync(csv, 'utf8')
          .trimEnd()
          .split('\n')
          .map((line) => line.split(','))
        expect(rows.map((r) => r[0]).sort()).toEqual(['hangs', 'solved', 'untouched', 'upto3'])
        for (const row of rows)
          for (const n of report.stages) {
            const entry = by[row[0]!]!.get(n)!
            expect(Number(row[header!.indexOf(`stage ${n}`)]), `${row[0]} stage ${n}`).toBe(ownScore(entry))
          }
        const total = (learner: string) => Number(rows.find((r) => r[0] === learner)![header!.indexOf('total')])
        const points = STAGES.reduce((n, s) => n + stageByNumber(s).points, 0)
        expect(total('solved')).toBe(points)
        expect(total('hangs')).toBe(points - last.points)
        expect(total('upto3')).toBeGreaterThan(total('untouched'))
      } finally {
        scratch.dispose()
      }
    },
    ROSTER_TEST_TIMEOUT_MS,
  )

  it(
    'a grade that outlives its time limit is stopped there, and so is every server its grader started',
    async () => {
      const scratch = scratchDir('roster-stuck')
      try {
        const roster = join(scratch.path, 'class')
        mkdirSync(roster)
        // Its server never listens (its layer is never made, and a timer keeps it alive), so its grade
        // waits for the 60 s start-up ceiling: the roster's 5 s limit comes first, whatever the machine's speed.
        const dir = checkout(roster, 'stuck')
        const stage1 = stageByNumber(1)
        writeFileSync(
          join(dir, 'stages', stage1.folder, 'idempotency.ts'),
          'export const createLayer = () => new Promise<never>(() => setInterval(() => {}, 1_000))\n',
        )
        const store = join(scratch.path, 'grades.sqlite')
        const json = join(scratch.path, 'roster.json')
        const graded = await npm(scratch.path, 'grade', ['1', '--roster', roster, '--store', store, '--json', json, '--time-limit', '5'])
        expect(graded.code, graded.out).toBe(0)
        const [stuck] = (JSON.parse(readFileSync(json, 'utf8')) as RosterJson).submissions
        expect(stuck!.learner).toBe('stuck')
        expect(stuck!.stages, graded.out).toMatchObject([{ stage: 1, outcome: 'time limit', result: { score: 0 } }])
        await expectNothingLeft('left behind by the batch', scratch.path)
      } finally {
        scratch.dispose()
      }
    },
    10 * 60_000,
  )
})
