// The results store, `npm run scores` and `npm run scores:import`, on a
// made-up class (scores.fixture.ts) and on result files the real grader wrote.
import { LAUNCHER } from '#harness/commands.ts'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import { DuplicateRunError, ResultsStore } from '#grader/roster/store.ts'
import { notPassed, summarize } from '#grader/scores/summary.ts'
import { CHECKS, CLASS, result } from './scores.fixture.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratches: Array<{ dispose(): void }> = []
afterEach(() => scratches.splice(0).forEach((s) => s.dispose()))
function scratch(label: string) {
  const s = scratchDir(label)
  scratches.push(s)
  return s.path
}

/** Runs an npm script the way an instructor does; never throws, returns what it printed. */
function npm(script: string, ...args: string[]) {
  const r = spawnSync('npm', ['run', '--silent', script, '--', ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

/** Enough of RFC 4180 for these files: quoted fields with doubled quotes, no newline inside a field. */
function parseCsv(text: string): string[][] {
  return text
    .trimEnd()
    .split('\n')
    .map((line) => {
      const fields: string[] = []
      let i = 0
      while (i <= line.length) {
        if (line[i] === '"') {
          let field = ''
          let j = i + 1
          for (; j < line.length; j++) {
            if (line[j] !== '"') field += line[j]
            else if (line[j + 1] === '"') field += line[j++]
            else break
          }
          fields.push(field)
          i = j + 2
        } else {
          const end = line.indexOf(',', i) < 0 ? line.length : line.indexOf(',', i)
          fields.push(line.slice(i, end))
          i = end + 1
        }
      }
      return fields
    })
}

const at = (minute: number) => new Date(Date.UTC(2026, 2, 14, 9, minute)).toISOString()

/** Each learner's stages 0, 1 and 2, each graded on its own (as a roster does). */
function storeWithClass(path: string) {
  const store = new ResultsStore(join(path, 'grades.sqlite'))
  CLASS.forEach((l, i) => {
    for (const stage of [0, 1, 2])
      store.record({ learner: l.learner, gradedAt: at(i * 3 + stage), outcome: 'graded', reason: '', origin: 'test', result: result(100 + i, l.marks, stage) })
  })
  return store
}

describe('the results store', () => {
  it('keeps every run, gives each learner the latest run of each stage, and stores a run only once', () => {
    const store = new ResultsStore(join(scratch('store'), 'grades.sqlite'))
    const first = result(1, { basics: 'fail' })
    const second = result(2)
    store.record({ learner: 'ada', gradedAt: at(1), outcome: 'graded', reason: '', origin: 'test', result: first })
    store.record({ learner: 'ada', gradedAt: at(2), outcome: 'graded', reason: '', origin: 'test', result: second })
    store.record({ learner: 'ada', gradedAt: at(3), outcome: 'graded', reason: '', origin: 'test', result: { ...result(3), stage: 1 } })
    expect(store.runCount()).toBe(3)
    expect(store.latestRuns().map((r) => [r.learner, r.stage, r.seed])).toEqual([
      ['ada', 1, 3],
      ['ada', 2, 2],
    ])
    const [latestAt2] = store.latestRuns(2)
    expect(latestAt2).toMatchObject({ learner: 'ada', seed: 2, score: second.score, maxScore: second.maxScore, gradedAt: at(2) })
    expect(latestAt2!.checks.map((c) => [c.id, c.status, c.points])).toEqual(second.checks.map((c) => [c.id, c.status, c.points]))

    expect(() => store.record({ learner: 'ada', gradedAt: at(1), outcome: 'graded', reason: '', origin: 'again', result: first })).toThrow(DuplicateRunError)
    expect(store.runCount()).toBe(3)
    store.close()
  })
})

describe('a store made before --server grading', () => {
  it('takes skipped results once opened, and keeps its old rows', () => {
    const path = join(scratch('old-store'), 'grades.sqlite')
    const old = new ResultsStore(path)
    old.record({ learner: 'ada', gradedAt: at(1), outcome: 'graded', reason: '', origin: 'test', result: result(1, { basics: 'fail' }) })
    old.close()
    // Put back the CHECK such a store was made with (no 'skipped').
    const db = new Database(path)
    const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'check_results'").pluck().get() as string
    db.unsafeMode(true)
    db.pragma('writable_schema = ON')
    db.prepare("UPDATE sqlite_master SET sql = ? WHERE name = 'check_results'").run(sql.replace(", 'skipped'", ''))
    db.pragma('writable_schema = OFF')
    db.pragma('user_version = 1')
    db.close()
    const reopened = new Database(path)
    expect(() => reopened.prepare("INSERT INTO check_results VALUES (1, 99, 'x', 0, 'x', 'skipped', 0, 0, '')").run()).toThrow(/CHECK/)
    reopened.close()

    const store = new ResultsStore(path)
    store.record({ learner: 'py', gradedAt: at(2), outcome: 'graded', reason: '', origin: 'test', result: result(2, { reserialized: 'skipped' }) })
    const runs = store.latestRuns()
    store.close()
    expect(runs.map((r) => r.learner).sort()).toEqual(['ada', 'py'])
    expect(runs.find((r) => r.learner === 'ada')!.checks.find((c) => c.id === 'basics')!.status).toBe('fail')
    expect(runs.find((r) => r.learner === 'py')!.checks.find((c) => c.id === 'reserialized')!.status).toBe('skipped')
  })
})

describe('a store made before the result contract', () => {
  it("counts each run's score again, as the stage's own checks, once opened", () => {
    const path = join(scratch('pre-contract'), 'grades.sqlite')
    const old = new ResultsStore(path)
    const graded = result(1, { basics: 'fail', reserialized: 'fail' })
    old.record({ learner: 'ada', gradedAt: at(1), outcome: 'graded', reason: '', origin: 'test', result: graded })
    old.close()
    // Its score, as such a store holds it: every check of the run, regression included.
    const db = new Database(path)
    const everyCheck = graded.checks.reduce((n, c) => n + c.points, 0)
    db.prepare('UPDATE runs SET score = ?, max_score = ?').run(
      everyCheck,
      graded.checks.reduce((n, c) => n + c.maxPoints, 0),
    )
    db.pragma('user_version = 4')
    db.close()
    expect(everyCheck).not.toBe(graded.score)

    const store = new ResultsStore(path)
    const [run] = store.latestRuns()
    store.close()
    expect(run).toMatchObject({ score: graded.score, maxScore: graded.maxScore })
    expect(summarize([run!]).learners[0]!.stages[0]).toMatchObject({ stage: 2, points: graded.score, maxPoints: graded.maxScore })
  })
})

describe('summarize', () => {
  it('counts a skipped check (a --server grade) as neither a pass nor a failure', () => {
    const store = new ResultsStore(join(scratch('skipped'), 'grades.sqlite'))
    store.record({
      learner: 'py',
      gradedAt: at(1),
      outcome: 'graded',
      reason: '',
      origin: 'test',
      result: result(1, { reserialized: 'skipped', basics: 'skipped' }),
    })
    store.record({ learner: 'ts', gradedAt: at(2), outcome: 'graded', reason: '', origin: 'test', result: result(2, { reserialized: 'fail' }) })
    const summary = summarize(store.latestRuns())
    store.close()
    const py = summary.learners.find((l) => l.learner === 'py')!
    expect(py.stages[0]).toMatchObject({ stage: 2, passedAll: true, regressionFailed: 0 })
    expect(notPassed(py)).toEqual([])
    const stat = (id: string) => summary.checkStats.find((c) => c.id === id)!
    expect(stat('reserialized')).toMatchObject({ graded: 1, passed: 0 })
    expect(stat('payload-changed')).toMatchObject({ graded: 2, passed: 2 })
    expect(summary.stageStats.find((s) => s.stage === 2)).toMatchObject({ graded: 2, passedAll: 1 })
  })
})

describe('npm run scores', () => {
  it('ranks the class, shows points per stage and every check, the checks failed most and how to rerun; --csv exports it', () => {
    const dir = scratch('scores')
    storeWithClass(dir).close()
    const csvFile = join(dir, 'out.csv')
    const { code, out, err } = npm('scores', '--store', join(dir, 'grades.sqlite'), '--csv', csvFile)
    expect(code, err).toBe(0)

    // What the ranking must be, from the marks alone.
    const points = (marks: (typeof CLASS)[number]['marks']) => CHECKS.filter((c) => !marks[c.id]).reduce((s, c) => s + c.points, 0)
    const max = CHECKS.reduce((s, c) => s + c.points, 0)
    const ranked = [...CLASS].map((l) => ({ ...l, total: points(l.marks) })).sort((a, b) => b.total - a.total || (a.learner < b.learner ? -1 : 1))
    expect(new Set(ranked.map((l) => l.total)).size, 'the made-up class has no ties').toBe(ranked.length)

    const table = out.slice(0, out.indexOf('\nChecks'))
    const positions = ranked.map((l) => table.indexOf(` ${l.learner} `))
    expect(
      positions.every((p) => p > 0),
      table,
    ).toBe(true)
    expect(
      [...positions].sort((a, b) => a - b),
      'learners are listed best first',
    ).toEqual(positions)
    for (const l of ranked) {
      const line = table.split('\n').find((x) => x.includes(` ${l.learner} `))!
      expect(line, 'total').toContain(`${l.total}/${max}`)
      for (const stage of [0, 1, 2]) {
        const own = CHECKS.filter((c) => c.stage === stage)
        const got = own.filter((c) => !l.marks[c.id]).reduce((s, c) => s + c.points, 0)
        expect(line, `stage ${stage}`).toContain(`${got}/${own.reduce((s, c) => s + c.points, 0)}`)
      }
    }
    // One row per check, one mark per learner, in ranking order.
    const symbol = { pass: '✓', fail: '✗', timeout: 'T', error: '!' } as const
    for (const c of CHECKS) {
      const row = out.split('\n').find((x) => x.trimStart().startsWith(`${c.id} (${c.points} pt)`))!
      expect(row.replace(/\s+/g, ' ')).toContain(` ${ranked.map((l) => symbol[l.marks[c.id] ?? 'pass']).join(' ')} `)
    }
    // The check failed most: the lowest pass rate in the class.
    const rate = (id: string) => CLASS.filter((l) => !l.marks[id as keyof typeof l.marks]).length / CLASS.length
    const worst = [...CHECKS].sort((a, b) => rate(a.id) - rate(b.id))[0]!
    const failedMost = out.slice(out.indexOf('\nFailed most'))
    expect(failedMost.split('\n')[2]).toContain(`${Math.round(rate(worst.id) * 100)}% pass  ${worst.id}`)
    expect(failedMost).toContain(`${worst.id} went wrong`)
    // How to rerun each stage not passed (its own checks failing), and nothing for a clean pass.
    CLASS.forEach((l, i) => {
      for (const stage of [0, 1, 2]) {
        const failing = CHECKS.some((c) => c.stage === stage && l.marks[c.id])
        const rerun = `npm run grade -- ${stage} --seed ${100 + i} --dir /class/x`
        if (failing) expect(out, `${l.learner} stage ${stage}`).toContain(rerun)
      }
    })
    expect(out).toMatch(/ ada +every graded stage passes/)

    const [header, ...rows] = parseCsv(readFileSync(csvFile, 'utf8'))
    expect(header![0]).toBe('learner')
    const totalCol = header!.indexOf('total')
    expect(totalCol).toBeGreaterThan(0)
    // Learner ids stay text in a spreadsheet: a formula is defused with a leading quote.
    const name = (l: string) => (/^[=+\-@]/.test(l) ? `'${l}` : l)
    expect(rows.map((r) => [r[0], Number(r[totalCol])])).toEqual(ranked.map((l) => [name(l.learner), l.total]))
    const basicsCol = header!.indexOf('0:basics')
    expect(rows.map((r) => Number(r[basicsCol]))).toEqual(ranked.map((l) => (l.marks.basics ? 0 : 4)))
  })

  it('lists a learner of the class never graded as "not graded", last, in no pass rate and no average; --roster DIR names more', () => {
    const dir = scratch('not-graded')
    const store = storeWithClass(dir)
    // A roster that held one more learner than the batch graded (interrupted before reaching them, say).
    store.listRoster('roster /class', [...CLASS.map((l) => l.learner), 'zed-never-graded'])
    const graded = summarize(store.latestRuns())
    store.close()
    const roster = join(dir, 'roster')
    for (const name of ['zed-never-graded', 'yan-new-folder', '.hidden']) mkdirSync(join(roster, name), { recursive: true })
    const csvFile = join(dir, 'out.csv')
    const htmlFile = join(dir, 'out.html')
    const { code, out, err } = npm('scores', '--store', join(dir, 'grades.sqlite'), '--roster', roster, '--csv', csvFile, '--html', htmlFile)
    expect(code, err).toBe(0)

    expect(out).toContain(`Scores · ${CLASS.length + 2} learners, 2 not graded`)
    const table = out.slice(0, out.indexOf('\nChecks')).split('\n')
    const rows = table.filter((line) => /^ ?\d+ {2}/.test(line))
    expect(rows.slice(-2).map((line) => line.trim().split(/\s+/)[1])).toEqual(['yan-new-folder', 'zed-never-graded'])
    for (const line of rows.slice(-2)) expect(line).toMatch(/—\s+—\s+—\s+not graded$/)
    expect(out).not.toContain('.hidden')
    expect(out).toMatch(/ zed-never-graded +not graded: no run of theirs is stored/)
    // The pass rates are the graded learners' alone, as if the others were not in the class.
    for (const c of graded.checkStats) {
      const row = out.split('\n').find((x) => x.trimStart().startsWith(`${c.id} (${c.maxPoints} pt)`))!
      expect(row, c.id).toMatch(new RegExp(`${c.passed}/${c.graded} ${Math.round(c.rate * 100)}%$`))
      expect(c.graded).toBe(CLASS.length)
    }
    // In the CSV, empty cells and "not graded": a gradebook must not read them as 0 points.
    const [header, ...csvRows] = parseCsv(readFileSync(csvFile, 'utf8'))
    const zed = csvRows.find((r) => r[0] === 'zed-never-graded')!
    expect(zed).toHaveLength(header!.length)
    expect(zed[header!.indexOf('outcome')]).toBe('not graded')
    expect(zed.filter((_, i) => i !== 0 && i !== header!.indexOf('outcome')).every((cell) => cell === '')).toBe(true)
    expect(readFileSync(htmlFile, 'utf8')).toMatch(/zed-never-graded<\/td>(<td>—<\/td>)+<td class="none">not graded<\/td>/)
  })

  it('says so when there is no store yet', () => {
    const { code, err } = npm('scores', '--store', join(scratch('none'), 'missing.sqlite'))
    expect(code).toBe(2)
    expect(err).toMatch(/no results store at .*missing\.sqlite/)
  })
})

describe('npm run scores:import', () => {
  it('loads result files the grader wrote (as CI does), once each, and refuses one whose numbers do not add up', () => {
    const dir = scratch('import')
    const ci = join(dir, 'ci', 'artifacts')
    mkdirSync(ci, { recursive: true })
    // A real result file, as the CI template produces it.
    const graded = spawnSync(process.execPath, [LAUNCHER, 'grader/cli/grade.ts', '0', '--solution', '--seed', '11', '--json', join(ci, 'alice.json')], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
    expect(graded.status, graded.stdout + graded.stderr).toBe(0)
    const alice = JSON.parse(readFileSync(join(ci, 'alice.json'), 'utf8'))
    writeFileSync(join(ci, 'result.json'), JSON.stringify({ ...alice, learner: 'bob', gradedAt: '2026-03-14T09:00:00Z' }))
    writeFileSync(join(ci, 'forged.json'), JSON.stringify({ ...alice, score: alice.score + 10 }))
    // A file from before the result contract: its score may count regression checks, so it is not read as one.
    const { schema: _, ...unversioned } = alice
    writeFileSync(join(ci, 'unversioned.json'), JSON.stringify(unversioned))
    const store = join(dir, 'grades.sqlite')

    const first = npm('scores:import', '--store', store, join(dir, 'ci'))
    expect(first.code, 'two files refused').toBe(1)
    expect(first.err).toMatch(/forged\.json: not a grade result: .*does not match its checks/s)
    expect(first.err).toContain('unversioned.json: written by a grader older than the result contract (no "schema")')
    expect(first.out).toContain('2 imported, 0 already there, 2 refused')

    const again = npm('scores:import', '--store', store, join(ci, 'alice.json'))
    expect(again.code).toBe(0)
    expect(again.out).toMatch(/alice's stage 0 run with seed 11 .* is already in the store/)
    expect(again.out).toContain('0 imported, 1 already there, 0 refused')

    const s = new ResultsStore(store)
    expect(s.runCount()).toBe(2)
    const runs = s.latestRuns()
    s.close()
    expect(runs.map((r) => r.learner)).toEqual(['alice', 'bob'])
    for (const r of runs) {
      expect(r).toMatchObject({ stage: 0, seed: 11, score: alice.score, maxScore: alice.maxScore, rerun: alice.rerun, outcome: 'graded' })
      expect(r.checks.map((c) => c.id)).toEqual(alice.checks.map((c: { id: string }) => c.id))
    }
    expect(runs[1]!.gradedAt).toBe('2026-03-14T09:00:00Z')
  })
})
