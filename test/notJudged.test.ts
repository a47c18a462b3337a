// One cause, one failed check. A check that finds its precondition missing
// (another check's property: with no lease at all there is no takeover to
// judge) reports "not judged: … (see <check>)": no ✗, no points, not a
// failure of its own. Here: how the runner, the result files and the score
// report take that status (no server), and the grades that show it, on
// layers whose one bug is the lease.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { NotJudged } from '#grader/engine/check.ts'
import { isFailure } from '#grader/engine/checkResult.ts'
import { RESULT_SCHEMA } from '#grader/engine/gradeResult.ts'
import { classifyFailure, type ServerView } from '#grader/engine/classifyFailure.ts'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'
import { stage3Mutants } from '#grader/mutants/stage3.ts'
import { gradeResultSchema } from '#grader/roster/resultSchema.ts'
import { grade, type GradeResult } from '#grader/grade.ts'
import { summarize } from '#grader/scores/summary.ts'
import { ResultsStore, type StoredRun } from '#grader/roster/store.ts'

const server: ServerView = { unexpectedExit: undefined, logTail: () => 'listening on http://127.0.0.1:1\nPOST /transfers 409' }

describe('a check left unjudged', () => {
  it('is classified not-judged, naming the check that fails for it, with no failure details of its own', () => {
    const error = new NotJudged('no lease: a retry 23 h after the claim still got 409', 'crash-mid-transfer')
    const classified = classifyFailure(error, [server], { recorded: [], unanswered: [] })
    expect({ ...classified, message: String(classified.message) }).toEqual({
      status: 'not-judged',
      message: 'not judged: no lease: a retry 23 h after the claim still got 409 (see crash-mid-transfer)',
      failure: undefined,
      blockedBy: 'crash-mid-transfer',
    })
  })

  it('is a failure after all when a server died during the check', () => {
    const dead: ServerView = { unexpectedExit: 'exited with code 1', logTail: () => 'boom' }
    const got = classifyFailure(new NotJudged('no lease', 'crash-mid-transfer'), [dead], { recorded: [], unanswered: [] })
    expect(got.status).toBe('fail')
  })

  it('is not passed, earns nothing, and is not a failure', () => {
    expect(isFailure({ passed: false, status: 'not-judged' })).toBe(false)
    expect(isFailure({ passed: false, status: 'fail' })).toBe(true)
    expect(isFailure({ passed: true, status: 'skipped' })).toBe(false)
  })

  const file = (points: number) => ({
    schema: RESULT_SCHEMA,
    stage: 3,
    slug: 'in-progress',
    seed: 1,
    gradable: true,
    server: { started: true, reason: null },
    refused: null,
    passed: false,
    score: points,
    maxScore: 12,
    isolation: 'bwrap',
    durationMs: 1,
    rerun: 'npm run grade -- 3 --seed 1',
    checks: [
      { id: 'crash-mid-transfer', stage: 3, title: 't', passed: false, status: 'fail', points: 0, maxPoints: 8, message: 'no lease', regression: false },
      {
        id: 'lease-length',
        stage: 3,
        title: 't',
        passed: false,
        status: 'not-judged',
        points,
        maxPoints: 4,
        message: 'not judged: no lease (see crash-mid-transfer)',
        regression: false,
      },
    ],
  })

  it('is accepted in a result file only unpassed and at 0 points', () => {
    expect(gradeResultSchema.safeParse(file(0)).success).toBe(true)
    expect(gradeResultSchema.safeParse(file(4)).success).toBe(false)
  })

  it('is stored, also in a results store made before it existed (its CHECK is widened once, the old rows kept)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'not-judged-store-'))
    try {
      const path = join(dir, 'grades.sqlite')
      const stored = { learner: 'ada', outcome: 'graded' as const, reason: '', origin: 'test' }
      new ResultsStore(path).close()
      // Put back the CHECK a store had before 'not-judged' (user_version 2).
      const db = new Database(path)
      const sql = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'check_results'").pluck().get() as string
      db.unsafeMode(true)
      db.pragma('writable_schema = ON')
      db.prepare("UPDATE sqlite_master SET sql = ? WHERE name = 'check_results'").run(sql.replace(", 'not-judged'", ''))
      db.pragma('writable_schema = OFF')
      db.pragma('user_version = 2')
      db.close()
      const store = new ResultsStore(path)
      store.record({ ...stored, gradedAt: '2026-03-14T09:00:00.000Z', result: gradeResultSchema.parse(file(0)) })
      const [run] = store.latestRuns()
      store.close()
      expect(run!.checks.map((c) => [c.id, c.status, c.points])).toEqual([
        ['crash-mid-transfer', 'fail', 0],
        ['lease-length', 'not-judged', 0],
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('counts neither way in the pass rates, and not as a regression failure', () => {
    const check = (id: string, stage: number, status: StoredRun['checks'][number]['status']) => ({
      id,
      stage,
      title: id,
      status,
      points: status === 'pass' ? 2 : 0,
      maxPoints: 2,
      message: '',
    })
    const run = (learner: string, checks: StoredRun['checks']): StoredRun => ({
      id: 1,
      learner,
      stage: 3,
      slug: 'in-progress',
      seed: 1,
      gradedAt: '2026-03-14T09:00:00.000Z',
      outcome: 'graded',
      reason: '',
      score: 0,
      maxScore: 0,
      durationMs: 1,
      rerun: '',
      origin: 'test',
      checks,
    })
    const s = summarize([
      run('ada', [check('crash-mid-transfer', 3, 'fail'), check('lease-length', 3, 'not-judged'), check('bank-basics', 0, 'not-judged')]),
      run('bob', [check('crash-mid-transfer', 3, 'pass'), check('lease-length', 3, 'pass'), check('bank-basics', 0, 'pass')]),
    ])
    const stat = (id: string) => s.checkStats.find((c) => c.id === id)!
    expect([stat('lease-length').graded, stat('lease-length').passed]).toEqual([1, 1])
    expect([stat('crash-mid-transfer').graded, stat('crash-mid-transfer').passed]).toEqual([2, 1])
    const ada = s.learners.find((l) => l.learner === 'ada')!
    expect(ada.stages[0]).toMatchObject({ passedAll: false, regressionFailed: 0 })
  })
})

/** The stage 3 checks that need a lease to end: without one, each is left unjudged. */
const NEED_A_LEASE = ['lease-expired-owner-check', 'lease-length', 'retry-after-remaining-lease', 'takeover-core-failure', 'key-row-states']

const mutant = (id: string) => stage3Mutants.find((m) => m.id === id)!
async function gradeStage3(layer: Mutant, seed: number): Promise<GradeResult> {
  const path = materialize(layer)
  return grade({ stage: 3, seed, source: { kind: 'dir', path }, noRegression: true })
}

/**
 * The hand-written checks that failed. The histories check runs whatever
 * failed before it, and the model meets the same bug: it fails too, last.
 */
const failed = (r: GradeResult) => {
  const ids = r.checks.filter(isFailure).map((c) => c.id)
  expect(ids.at(-1), r.rerun).toBe('histories-3')
  return ids.slice(0, -1)
}
const unjudged = (r: GradeResult) => r.checks.filter((c) => c.status === 'not-judged')

describe('stage 3 on a layer whose one bug is the lease', () => {
  it('no lease at all (no-lease): exactly one ✗, crash-mid-transfer; every check that needs a lease is not judged', async () => {
    const r = await gradeStage3(mutant('no-lease'), 3)
    expect(failed(r), r.rerun).toEqual(['crash-mid-transfer'])
    const crash = r.checks.find((c) => c.id === 'crash-mid-transfer')!
    expect(crash.message).toMatch(/^no lease: after the crash, retries 30000 ms after the claim .* and 82,800,000 ms \(23 h\) after it still got 409/)
    expect(crash.message).toMatch(/\(course rule, beyond draft-07 §2\.6\)$/)
    for (const id of NEED_A_LEASE) {
      const c = r.checks.find((x) => x.id === id)!
      expect([c.id, c.status, c.blockedBy, c.points, c.passed]).toEqual([id, 'not-judged', 'crash-mid-transfer', 0, false])
      expect(c.message).toMatch(/^not judged: no lease: .* \(see crash-mid-transfer\)$/)
    }
    // Whatever else did not pass was left unjudged, never failed.
    expect(r.checks.filter((c) => !c.passed).every((c) => ['crash-mid-transfer', 'histories-3'].includes(c.id) || c.status === 'not-judged')).toBe(true)
    expect(r.passed).toBe(false)
    expect(r.score).toBe(r.checks.filter((c) => c.status === 'pass' && !c.regression).reduce((n, c) => n + c.points, 0))
  }, 180_000)

  it('a lease a thousand times too long: one ✗, lease-length, with the lease it measured; the takeovers are not judged', async () => {
    const r = await gradeStage3(mutant('lease-multiplied-by-1000'), 3)
    expect(failed(r), r.rerun).toEqual(['lease-length'])
    const length = r.checks.find((c) => c.id === 'lease-length')!
    expect(length.message).toContain('a retry 30000 ms after the claim, at the end of its 30000 ms lease, was refused (HTTP 409)')
    expect(length.message).toContain('it is exactly 30,000,000 ms (8 h 20 min), not 30,000 ms: exactly 1000 × LAB_LEASE_MS')
    expect(
      unjudged(r)
        .filter((c) => NEED_A_LEASE.includes(c.id))
        .map((c) => [c.id, c.blockedBy]),
    ).toEqual(NEED_A_LEASE.filter((id) => id !== 'lease-length').map((id) => [id, 'lease-length']))
    // crash-mid-transfer judged what is its own (the money moved once, once the claim was taken over), and noted the rest.
    const crash = r.checks.find((c) => c.id === 'crash-mid-transfer')!
    expect(crash.status).toBe('pass')
    expect(crash.notes.join('\n')).toContain('the lease is longer than LAB_LEASE_MS (see lease-length)')
  }, 180_000)
})

// crash-mid-transfer says how long after the claim its retries still got 409,
// never that the claim "never expires": it watched up to 23 h (a few seconds on
// a real clock), and a claim may still go with its key when the key's TTL ends.
describe('crash-mid-transfer on a layer with no lease says how long it watched the claim', () => {
  const crashMessage = async (layer: Mutant) => {
    const r = await grade({ stage: 3, seed: 3, source: { kind: 'dir', path: materialize(layer) }, only: ['crash-mid-transfer'] })
    const [crash] = r.checks
    expect(crash!.status, r.rerun).toBe('fail')
    expect(crash!.message).not.toContain('never')
    return crash!
  }

  it("on the grader's clock: still got 409 23 h after the claim, far past its lease", async () => {
    const crash = await crashMessage(mutant('no-lease'))
    expect(crash.message).toContain("and 82,800,000 ms (23 h) after it still got 409: far past its lease, the crashed request's claim still held its key")
  }, 180_000)

  it('on the real clock (the layer reads CURRENT_TIMESTAMP): still got 409 up to a few seconds after the claim, past its lease', async () => {
    const noLease = mutant('no-lease')
    // The column default names a clock the grader cannot move: the timed checks run again on the real one, and that run decides.
    const crash = await crashMessage({
      ...noLease,
      id: 'no-lease-current-timestamp',
      edits: [...noLease.edits, { file: 'keyStore.ts', find: 'created_at  TEXT NOT NULL', replace: 'created_at  TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP' }],
    })
    expect(crash.notes[0]).toMatch(/^failed on the real clock/)
    expect(crash.message).toMatch(
      /^after the crash, retries up to about \d+ ms after the claim, past the end of its 1000 ms lease, still got 409: the crashed request's claim still held its key/,
    )
  }, 180_000)
})

describe("lease-length's message: what it measured, and only the causes the measure supports", () => {
  it('a lease a thousand times too short: measured on another claim, exactly LAB_LEASE_MS / 1000', async () => {
    const r = await gradeStage3(mutant('lease-divided-by-1000'), 5)
    const length = r.checks.find((c) => c.id === 'lease-length')!
    expect(length.status).toBe('fail')
    expect(length.message).toContain('the lease is shorter than LAB_LEASE_MS. Measured on another claim: the lease is exactly 30 ms, not 30,000 ms')
    expect(length.message).toContain('exactly LAB_LEASE_MS / 1000')
    expect(length.message).not.toContain('multiplied')
  }, 180_000)

  it('a lease held one millisecond too long (lease_until >= now still in flight): that, and no unit guess', async () => {
    const oneMsLate: Mutant = {
      id: 'lease-one-ms-late',
      stage: 3,
      title: 'an in_progress claim is still in flight at lease_until itself',
      mustFail: 'lease-length',
      edits: [
        {
          file: 'keyStore.ts',
          find: `if (row.leaseUntil! > now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }`,
          replace: `if (row.leaseUntil! >= now) return { kind: 'in-flight', retryAfterMs: row.leaseUntil! - now }`,
        },
      ],
    }
    const path = materialize(oneMsLate)
    const r = await grade({ stage: 3, seed: 5, source: { kind: 'dir', path }, only: ['lease-length'] })
    const [length] = r.checks
    expect(length!.status).toBe('fail')
    expect(length!.message).toContain('it is exactly 30,001 ms, not 30,000 ms: one millisecond too long')
    expect(length!.message).not.toMatch(/1000|seconds/)
  }, 180_000)
})
