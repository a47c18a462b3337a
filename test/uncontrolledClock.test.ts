// A layer that reads a clock the grader cannot move is judged on the real
// clock: every timed check runs again there (runCheck.ts), and that run
// decides. A correct layer reading SQLite's unixepoch() passes, with a note
// naming the clock; a wrong one fails with the real-clock evidence, even
// where the grader's clock, which it does not read, saw nothing wrong.
import { describe, expect, it } from 'vitest'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'
import { grade } from '#grader/grade.ts'
import { uncontrolledClocks } from '#grader/policing/uncontrolledClocks.ts'

/** Stage 5's solution with its TTL stamped and judged by SQLite's own clock; leases stay on Date.now(). */
const ttlBySqliteClock: Mutant = {
  id: 'ttl-by-sqlite-clock',
  stage: 5,
  title: "the TTL read off SQLite's unixepoch(), which the grader cannot move",
  mustFail: 'expiry-without-purge',
  edits: [
    {
      file: 'keyStore.ts',
      find: '  let lastPurge = 0\n',
      replace:
        '  let lastPurge = 0\n' +
        '  const sqliteClock = db.prepare<[], { t: number }>("SELECT CAST(unixepoch(\'subsec\') * 1000 AS INTEGER) AS t")\n' +
        '  const sqliteNowMs = () => sqliteClock.get()!.t\n',
    },
    {
      file: 'keyStore.ts',
      find: '          lastPurge = now\n          purge.run(now, now)',
      replace: '          lastPurge = now\n          purge.run(sqliteNowMs(), now)',
    },
    { file: 'keyStore.ts', find: 'now + leaseMs, now + ttlMs,', replace: 'now + leaseMs, sqliteNowMs() + ttlMs,' },
    { file: 'keyStore.ts', find: 'if (row.expiresAt <= now &&', replace: 'if (row.expiresAt <= sqliteNowMs() &&' },
    { file: 'keyStore.ts', find: '          purge.run(now, now)\n          continue', replace: '          purge.run(sqliteNowMs(), now)\n          continue' },
  ],
}

/** The same, with the TTL taken as seconds where milliseconds are due: wrong on any clock. */
const ttlInSecondsBySqliteClock: Mutant = {
  ...ttlBySqliteClock,
  id: 'ttl-in-seconds-by-sqlite-clock',
  title: "the TTL read off SQLite's unixepoch(), and divided by 1000",
  edits: ttlBySqliteClock.edits.map((e) => (e.find.startsWith('now + leaseMs') ? { ...e, replace: 'now + leaseMs, sqliteNowMs() + ttlMs / 1000,' } : e)),
}

const TTL_CHECKS = ['expiry-without-purge', 'ttl-from-first-request', 'new-execution-after-expiry']

describe('a layer that reads a clock the grader cannot move', () => {
  it('is recognised by the clocks it reads', () => {
    const path = materialize(ttlBySqliteClock)
    expect(uncontrolledClocks(`${path}/stages/05-scope-ttl`).map(String)).toEqual(["SQLite's unixepoch()"])
    expect(uncontrolledClocks('solutions/05-scope-ttl')).toEqual([])
  })

  it("passes the TTL checks on the real clock, with a note that names SQLite's unixepoch()", async () => {
    const path = materialize(ttlBySqliteClock)
    const r = await grade({ stage: 5, seed: 41, source: { kind: 'dir', path }, only: TTL_CHECKS })
    for (const check of r.checks) {
      expect(check.passed, `${check.id}: ${check.message} (${r.rerun})`).toBe(true)
      expect(check.notes[0]).toMatch(/^passed on the real clock .*SQLite's unixepoch\(\)/)
    }
  }, 180_000)

  it('still fails when its TTL is in the wrong unit, with the real-clock evidence', async () => {
    const path = materialize(ttlInSecondsBySqliteClock)
    const r = await grade({ stage: 5, seed: 41, source: { kind: 'dir', path }, only: ['replay-before-expiry'] })
    const [check] = r.checks
    expect(check!.passed, r.rerun).toBe(false)
    // It passed on the grader's clock: the TTL it reads (SQLite's) barely moved during the check. The real clock decides.
    expect(check!.notes[0]).toMatch(/^failed on the real clock \(passed on the grader's; the layer reads SQLite's unixepoch\(\)/)
    expect(check!.message).toMatch(/forgot the key before its TTL/)
  }, 180_000)
})
