// The grader graded: scenario servers that never start, die, hang, crash,
// answer garbage or get the money wrong must each be reported as the right
// failure within their timeouts, the reference solution must pass under any
// seed, and nothing a grade started may outlive it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import type { CheckResult } from '#grader/engine/checkResult.ts'
import type { GradeOptions, GradeResult } from '#grader/grade.ts'
import { expectNothingLeft } from './helpers/leftovers.ts'
import { descendantsOf, leftoverAfter, pidAlive } from './helpers/procs.ts'
import { gradeIn, scratchDir } from './helpers/scratch.ts'

const stage0 = stageByNumber(0)
const scenario = (name: string) => resolve(repoRoot, 'test', 'scenarios', `${name}.ts`)
const failedIds = (r: GradeResult) => r.checks.filter((c) => !c.passed).map((c) => c.id)
const byId = (r: GradeResult, id: string) => r.checks.find((c) => c.id === id)!

/**
 * Grades stage 0 (the reference solution unless told otherwise) and proves
 * that no process the grade started is still running when it returns.
 */
async function gradeAndCheckCleanup(label: string, options: Partial<GradeOptions>) {
  const scratch = scratchDir(label)
  try {
    const result = await gradeIn(scratch.path, { stage: 0, seed: 7, source: { kind: 'solution' }, ...options })
    await expectNothingLeft(`left behind by the ${label} grade`, scratch.path)
    return { result }
  } finally {
    scratch.dispose()
  }
}

/**
 * A server that did not start is reported once: the first check carries the
 * error, every other check is listed as not run, pointing at the first.
 */
function expectStartFailure(r: GradeResult, message: RegExp, ids = stage0.checks) {
  expect(r.checks.map((c) => c.id)).toEqual(ids)
  const [first, ...rest] = r.checks
  expect(first, first!.id).toMatchObject({ passed: false, status: 'error', points: 0 })
  expect(first!.message).toMatch(message)
  for (const c of rest)
    expect(c, c.id).toMatchObject({ passed: false, status: 'error', points: 0, message: `not run: the server did not start (see ${ids[0]})` })
  expect(r).toMatchObject({ passed: false, score: 0 })
}

// Where a test is about the start-up ceiling it sets one itself, shorter than
// the 60 s default yet long enough for a scenario to get going on a loaded
// machine (tsx alone can take seconds there); a crash never waits for it.
const SHORT_CEILING_MS = 20_000

function expectAllChecks(r: GradeResult, status: CheckResult['status'], message: RegExp) {
  expect(r.checks.map((c) => c.id)).toEqual(stage0.checks)
  for (const c of r.checks) {
    expect(c, c.id).toMatchObject({ passed: false, status, points: 0 })
    expect(c.message, c.id).toMatch(message)
  }
  expect(r).toMatchObject({ passed: false, score: 0, maxScore: stage0.points })
}

// Node warns when listeners pile up on one emitter: a sign the grader leaks
// them while it waits for a server.
const warnings: string[] = []
process.on('warning', (w) => warnings.push(`${w.name}: ${w.message}`))

afterAll(async () => {
  // Whatever this worker spawned (servers, learner-code children) is gone.
  const left = await leftoverAfter(() => descendantsOf(process.pid))
  expect(left.map((p) => `${p.pid} ${p.cmdline}`)).toEqual([])
})

// The slow scenarios wait on real timeouts (listed first, so they start first);
// running the tests side by side keeps the file short.
describe.concurrent('grading stage 0', () => {
  it('a server that hangs on /health fails the grade at the start-up ceiling, saying so, and its whole process group is killed', async ({ expect }) => {
    const { result } = await gradeAndCheckCleanup('hang-health', { entry: scenario('hangs-on-health'), startTimeoutMs: SHORT_CEILING_MS })
    expectStartFailure(result, /^the server did not start: the server is still running but GET \/health never answered 200 within 20 s \(last: .*timeout/i)
    // The scenario printed its own pid and its child's: both are gone,
    // although both ignore SIGTERM.
    const message = String(result.checks[0]!.message)
    const [, pid, grandchild] = /pid (\d+), grandchild pid (\d+)/.exec(message) ?? []
    expect(pid && grandchild, `the server log is in the message:\n${message}`).toBeTruthy()
    expect(pidAlive(Number(pid))).toBe(false)
    expect(pidAlive(Number(grandchild))).toBe(false)
  })

  it('a server that is alive but never prints its listening line fails at the start-up ceiling, named as such, with its log', async ({ expect }) => {
    const { result } = await gradeAndCheckCleanup('never-listens', { entry: scenario('never-listens'), startTimeoutMs: SHORT_CEILING_MS })
    expectStartFailure(
      result,
      /still running but did not print "listening on http:\/\/127\.0\.0\.1:PORT" within 20 s \(the start-up ceiling[\s\S]*warming up forever/,
    )
    expect(
      warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
      'listeners leaked while waiting',
    ).toEqual([])
  })

  it('a server whose requests never get an answer stops the grade at the first check that times out: that check says so, the rest are not judged', async ({
    expect,
  }) => {
    const { result } = await gradeAndCheckCleanup('hang-requests', { entry: scenario('hangs-on-requests'), only: ['bank-basics', 'transfers-move-money'] })
    const [hung, after] = result.checks
    // Its health route answers, so it is found when the check runs out of time: a deposit sent then gets no answer either.
    expect(hung).toMatchObject({ id: 'bank-basics', passed: false, status: 'fail', points: 0 })
    expect(hung!.message).toMatch(/^your server stopped answering during this check: its money routes answer nothing/)
    // What the learner is shown as "sent" must be the request that hung
    // (creating a client), not the last one that happened to complete.
    expect(hung!.failure?.exchange?.request.url).toMatch(/\/admin\/clients$/)
    expect(after).toMatchObject({ id: 'transfers-move-money', status: 'not-judged', points: 0, blockedBy: 'bank-basics' })
    expect(after!.message).toBe('not judged: your server stopped answering during bank-basics')
  })

  it('a query that never ends fails its check after 5 s, in the child that runs it: the grader goes on', async ({ expect }) => {
    // SQLite counts forever: run in the grader, it would hold the grader's event loop with it.
    const endless =
      'export const SUSPECTED_DUPLICATES_SQL = `WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x AS id FROM n WHERE x < 0`\n'
    const checkout = learnerCheckout('endless-query', endless)
    const { result } = await gradeAndCheckCleanup('endless-query', { source: { kind: 'dir', path: checkout.path }, only: ['suspected-duplicates'] })
    checkout.dispose()
    expect(result.checks[0]).toMatchObject({ id: 'suspected-duplicates', status: 'fail' })
    expect(result.checks[0]!.message).toMatch(/running the query SUSPECTED_DUPLICATES_SQL of .* did not finish within 5000 ms/)
  })

  it('learner code that never returns fails its check after 5 s, and its child process is killed', async ({ expect }) => {
    const checkout = learnerCheckout('endless-loop', 'while (true) {}\nexport const SUSPECTED_DUPLICATES_SQL = "SELECT 1"\n')
    const { result } = await gradeAndCheckCleanup('endless-loop', { source: { kind: 'dir', path: checkout.path }, only: ['suspected-duplicates'] })
    checkout.dispose()
    expect(result.checks[0]).toMatchObject({ id: 'suspected-duplicates', status: 'fail' })
    expect(result.checks[0]!.message).toMatch(/did not finish within 5000 ms/)
  })

  it('a server that exits before it listens is reported at once, by its exit, with what it printed', async () => {
    // A ceiling longer than the test's own timeout: had the grader waited for
    // it instead of noticing the exit, this test would time out.
    const { result } = await gradeAndCheckCleanup('exits-at-start', { entry: scenario('exits-at-start'), startTimeoutMs: 3_600_000 })
    expectStartFailure(result, /the server exited with code 3 before it listened[\s\S]*cannot open the database/)
  })

  it('a learner file that does not compile is reported once, by its file:line, and the other checks are listed as not run', async ({ expect }) => {
    const stage1 = stageByNumber(1)
    const layer = readFileSync(resolve(repoRoot, 'solutions', stage1.folder, 'idempotency.ts'), 'utf8').split('\n')
    layer.splice(2, 0, 'const broken = = 1')
    const checkout = learnerCheckout('syntax-error', layer.join('\n'), stage1, 'idempotency.ts')
    try {
      const { result } = await gradeAndCheckCleanup('syntax-error', { stage: 1, source: { kind: 'dir', path: checkout.path }, startTimeoutMs: 3_600_000 })
      const file = join(checkout.path, 'stages', stage1.folder, 'idempotency.ts')
      const ids = [...stage1.checks, ...stage0.checks]
      expectStartFailure(result, new RegExp(`^the server did not start: ${file}:3:\\d+: Unexpected "="\n`), ids)
      // The error appears once in the whole result, not once per check: the first check's first line and its log's own line, and server.reason (that first line).
      expect(JSON.stringify(result).split('Unexpected \\"=\\"').length - 1, 'copies of the error').toBe(3)
      expect(result.server).toEqual({ started: false, reason: String(result.checks[0]!.message).split('\n')[0] })
    } finally {
      checkout.dispose()
    }
  })

  it('a server that crashes on the first request fails every check as a crash, with its stack trace', async ({ expect }) => {
    const { result } = await gradeAndCheckCleanup('crash', { entry: scenario('crashes-on-first-request') })
    expectAllChecks(result, 'fail', /exited with code 1 during this check/)
    const first = result.checks[0]!
    expect(first.failure?.serverLog).toMatch(/crashed on POST \/admin\/clients/)
    expect(first.failure?.exchange?.request.url).toMatch(/\/admin\/clients$/)
    expect(first.failure?.exchange?.response).toBeUndefined()
  })

  it('a server that answers garbage fails every check with what came back', async ({ expect }) => {
    const { result } = await gradeAndCheckCleanup('garbage', { entry: scenario('answers-garbage') })
    expectAllChecks(result, 'fail', /failed: expected HTTP 201/)
    const f = byId(result, 'bank-basics').failure
    expect(f?.exchange?.response).toMatchObject({ status: 200, body: expect.stringContaining('<html>') })
  })

  it('a layer that reports a wrong balanceAfter fails exactly the check that reads it, showing both numbers', async ({ expect }) => {
    const { result } = await gradeAndCheckCleanup('tampered', { entry: scenario('tampered-balance') })
    expect(failedIds(result)).toEqual(['transfers-move-money'])
    const c = byId(result, 'transfers-move-money')
    expect(c).toMatchObject({ status: 'fail', message: 'the 201 body describes the transfer and the debited balance after it' })
    const expected = JSON.parse(String(c.failure!.expected!)) as { balanceAfter: number }
    const got = JSON.parse(String(c.failure!.got!)) as { balanceAfter: number }
    expect(got.balanceAfter - expected.balanceAfter).toBe(1_000)
    expect(c.failure?.exchange?.response?.status).toBe(201)
    expect(result.score).toBe(stage0.points - c.maxPoints)
  })

  it("a layer that silently executes transfers twice is caught by the ledger and balance checks, and by the demonstration's row count", async ({ expect }) => {
    const { result } = await gradeAndCheckCleanup('hidden-double', { entry: scenario('hidden-double') })
    expect(failedIds(result)).toEqual(['transfers-move-money', 'concurrent-transfers', 'suspected-duplicates'])
    for (const id of failedIds(result)) expect(byId(result, id).status).toBe('fail')
    expect(byId(result, 'concurrent-transfers').message).toBe('exactly one ledger row per 201 answered')
    // Three attempts funded once each, executed twice while the money lasts:
    // more rows than attempts, or a 402 for an attempt that was paid for.
    const demo = byId(result, 'suspected-duplicates')
    expect(demo).toMatchObject({
      message: 'at stage 0, 3 attempts of a funded transfer are 3 answers 201 and 3 ledger rows',
      failure: { expected: '{"answered201":3,"ledgerRows":3}' },
    })
    expect(demo.failure!.got).not.toBe(demo.failure!.expected)
  })

  // ---- stage 0 itself ---------------------------------------------------------
  // Seed 7 is graded by the scenario tests and by determinism.test.ts.
  const seeds = [1, 42, 2024, 987_654]

  it(`the reference solution passes under seeds ${seeds.join(', ')}, each drawing its own inputs`, async ({ expect }) => {
    const digests = new Set<string>()
    for (const seed of seeds) {
      const { result } = await gradeAndCheckCleanup(`solution-${seed}`, { seed })
      const failures = result.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.message}`)
      expect(failures, `seed ${seed}: ${result.rerun}`).toEqual([])
      expect(result).toMatchObject({ stage: 0, seed, passed: true, score: stage0.points, maxScore: stage0.points })
      expect(result.checks.map((c) => c.id)).toEqual(stage0.checks)
      expect(result.rerun).toBe(`npm run grade -- 0 --seed ${seed} --solution`)
      for (const c of result.checks) expect(c.inputs.draws, c.id).toBeGreaterThan(0)
      digests.add(byId(result, 'transfers-move-money').inputs.digest)
    }
    expect(digests.size).toBe(seeds.length)
  })

  it('the starter fails exactly suspected-duplicates, and says why', async ({ expect }) => {
    const { result } = await gradeAndCheckCleanup('starter', { source: { kind: 'starter' } })
    expect(failedIds(result)).toEqual(['suspected-duplicates'])
    const c = byId(result, 'suspected-duplicates')
    expect(c).toMatchObject({ status: 'fail', message: 'on a crafted ledger, your query must flag exactly the copies' })
    expect(c.failure?.got).toBe('[]')
    expect(JSON.parse(String(c.failure!.expected!)).length).toBeGreaterThan(0)
    expect(c.notes.join('\n')).toMatch(/same Idempotency-Key → 3 ledger row\(s\)/)
    expect(result.rerun).toBe('npm run grade -- 0 --seed 7')
  })

  it('--dir grades the learner files of another checkout: a correct query passes, a wrong one fails', async ({ expect }) => {
    const solved = readFileSync(resolve(repoRoot, 'solutions', stage0.folder, 'suspectedDuplicates.ts'), 'utf8')
    const good = learnerCheckout('good', solved)
    const wrong = learnerCheckout('wrong', 'export const SUSPECTED_DUPLICATES_SQL = "SELECT id FROM ledger"\n')
    const broken = learnerCheckout('broken', 'export const SUSPECTED_DUPLICATES_SQL = "SELEC id FROM ledger"\n')
    try {
      const only = ['suspected-duplicates']
      const ok = await gradeAndCheckCleanup('dir-good', { source: { kind: 'dir', path: good.path }, only })
      expect(ok.result.passed).toBe(true)
      expect(ok.result.rerun).toBe(`npm run grade -- 0 --seed 7 --dir ${good.path} --only suspected-duplicates`)
      const bad = await gradeAndCheckCleanup('dir-wrong', { source: { kind: 'dir', path: wrong.path }, only })
      expect(bad.result.checks[0]).toMatchObject({ passed: false, message: 'on a crafted ledger, your query must flag exactly the copies' })
      const err = await gradeAndCheckCleanup('dir-broken', { source: { kind: 'dir', path: broken.path }, only })
      expect(err.result.checks[0]!.message).toMatch(/^your query failed: .*syntax error/)
    } finally {
      for (const c of [good, wrong, broken]) c.dispose()
    }
  })
})

/** A checkout of the course holding only one learner file of a stage (stage 0's query by default), with this text. */
function learnerCheckout(label: string, text: string, stage = stage0, file = stage0.edits[0]!) {
  const checkout = scratchDir(`checkout-${label}`)
  const dir = join(checkout.path, 'stages', stage.folder)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, file), text)
  return checkout
}
