// Issue 34, the npm libraries of this week, graded again: express-idempotency@1.0.6
// in front of the course's bank (test/fixtures/express-idempotency/server.ts,
// stage 0's pass-through layer inside), graded as any --server is, at stage 4:
// the library caches answers by Idempotency-Key, refuses a key in progress
// (409) and a key reused with another request (417), which is the contract
// of stages 1 to 4; it has no scope and no expiry (stage 5).
//
// Its flaw under review: whether a request runs is decided by a header the
// client can send. The library marks its own cache hits by setting X-Hit:
// true on the request (dist/services/idempotencyService.js:92) and its
// isHit() reads that header back (:142-144), which the README tells every
// route to ask before doing anything. A client's own X-Hit: true, on a key
// never seen, is therefore a "hit": the route returns, nobody answers, and
// the key, created at :127 without a response, answers 409 to every retry.
// The histories send it among the library headers (LIBRARY_HEADERS in
// grader/model/history.ts); the grade must name it.
//
// A histories check shows one counterexample, and this library breaks the
// model in several ways: at some seeds (2, 3, 5, 6) it is a replay without
// Location instead. At SEED the first history fails at its first step, a
// request with X-Hit: true left unanswered, shrunk or not (grade() with
// shrink: false shows the same step): what is asserted does not depend on
// how far the shrinking gets in its time.
import { describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import type { GradeResult } from '#grader/grade.ts'
import { parseServerCommand } from '#harness/serverCommand.ts'
import { gradeIn, scratchDir } from '../helpers/scratch.ts'

const FIXTURE = 'test/fixtures/express-idempotency/server.ts'
const SEED = 4004

/**
 * Every check the library fails at stage 4 and below, and why, in its own
 * source (node_modules/express-idempotency/dist/). A check added to the
 * grade that the library fails, or one of these passing, changes this list:
 * the report is then read again.
 */
const FAILS = {
  // Stage 1.
  'key-required': 'a request without the header passes through untouched (services/idempotencyService.js:84, :132-134)',
  'key-format': 'any header value is a key: no format at all (:173)',
  'key-length-limit': 'nor a length',
  'quoted-key-same-as-bare': 'the key is the header as written, quotes and escapes included (:173)',
  'two-instances-one-database': 'keys live in an array in memory, one per process (defaults/inMemoryDataAdapter.js:21-24)',
  // Stage 2.
  'amended-amount': 'another body under a used key gets 417 Expectation Failed, not 422 (services/idempotencyService.js:116-118)',
  'fingerprint-covers-body': 'bodies are compared with a loose deep-equal: 1 equals "1" (defaults/defaultIntentValidator.js:23)',
  // Stage 3.
  'crash-after-commit': 'the keys in memory die with the process: the retry after a restart executes again',
  'lease-length': 'a key without a response is in progress forever: no lease (services/idempotencyService.js:107-111)',
  // Stage 4.
  'replay-exact': 'a replay carries Content-Type only, never Location (services/idempotencyService.js:235)',
  'replay-marked': 'nor Idempotent-Replayed',
  'replay-stored-402': 'only 2xx answers are kept (defaults/successfulResponseValidator.js:17-19); a 402 deletes the key (services/idempotencyService.js:196)',
  'changed-body-after-replay': 'so a changed body under the key of a 402 executes',
  'histories-4': "a client's X-Hit: true is taken for the library's own cache hit",
} as const

describe('express-idempotency@1.0.6 in front of the bank, graded at stage 4', () => {
  it(`fails, its histories naming the X-Hit header, and leaves nothing behind (seed ${SEED})`, { timeout: 300_000 }, async () => {
    const scratch = scratchDir('express-idempotency')
    let result: GradeResult
    try {
      const server = parseServerCommand(`node --import tsx ${FIXTURE}`, repoRoot)
      result = await gradeIn(scratch.path, { stage: 4, seed: SEED, server, sandbox: false })
    } catch (error) {
      scratch.dispose()
      throw error
    }
    // No server process, no temp folder of the grade's (leftovers.ts), before the folder goes.
    await scratch.disposeExpectingNoneLeft('left behind by the grade of express-idempotency')

    const byId = new Map(result.checks.map((c) => [c.id, c]))
    expect(result.passed).toBe(false)
    expect(result.score).toBeLessThan(result.maxScore)
    expect(result.rerun).toContain(`--server 'node --import tsx ${FIXTURE}'`)

    // The library is what answered: it echoes the key as a response header (services/idempotencyService.js:85), the bank never does.
    const replay = byId.get('replay-exact')?.failure?.exchange
    expect(replay?.response?.headers['idempotency-key']).toBe(replay?.request.headers['Idempotency-Key'])
    expect(replay?.request.headers['Idempotency-Key']).toBeTruthy()

    // Exactly the checks the library fails; the three that need a lease are left unjudged by lease-length.
    const failed = result.checks.filter((c) => c.status === 'fail').map((c) => c.id)
    expect(failed.sort()).toEqual(Object.keys(FAILS).sort())
    expect(result.checks.filter((c) => c.status === 'not-judged').map((c) => [c.id, c.blockedBy])).toEqual([
      ['lease-expired-owner-check', 'lease-length'],
      ['retry-after-remaining-lease', 'lease-length'],
      ['takeover-core-failure', 'lease-length'],
    ])
    expect(result.checks.filter((c) => !['pass', 'fail', 'not-judged', 'skipped'].includes(c.status))).toEqual([])

    // The histories: the failing step is a request that carries X-Hit: true and was never answered.
    const histories = byId.get('histories-4')!
    expect(histories.status).toBe('fail')
    expect(histories.failure?.got).toMatch(/^no answer \(no answer within \d+ s\)$/)
    expect(histories.failure?.expected).toMatch(/^it executes: 201/)
    const failingStep = String(histories.message)
      .split('\n')
      .filter((line) => /^✗ \d+ /.test(line.trim()))
    expect(failingStep).toHaveLength(1)
    expect(failingStep[0]).toMatch(/ \+ (?:[\w-]+: [^,→]+, )*X-Hit: true(?:, [\w-]+: [^,→]+)*\s+→\s+no answer/)
  })
})
