// Stage 4 (replay): solution, starter and mutants (see helpers/stageSuite.ts).
// The starter answers a completed duplicate with stage 3's 200 already-processed,
// so every replay check fails on it. Two hold already: it marks nothing, so no
// first answer is marked; and stage 3 releases a failed key by deleting it, so
// a changed body after a 503 is a new request there too.
import { describe, expect, it } from 'vitest'
import { isFailure } from '#grader/engine/checkResult.ts'
import { checksFor } from '#grader/checks/index.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { stage4Mutants } from '#grader/mutants/stage4.ts'
import { grade } from '#grader/grade.ts'
import { stageSuite } from './helpers/stageSuite.ts'

stageSuite(4, {
  mutants: stage4Mutants,
  starterPasses: ['first-response-unmarked', 'changed-body-after-failure'],
})

// One cause, one failure: a replay that lacks only a header or only the marker
// fails the check about that, and every other stage 4 check still passes
// (they judge the outcome and the ledger, and only note the missing header).
describe('a replay deviation fails only its own check', () => {
  it.for([
    ['replay-drops-location', 'replay-exact'],
    ['replay-unmarked', 'replay-marked'],
  ] as const)('%s fails %s and no other hand-written check of stage 4 (the histories check, last, meets it too)', async ([id, only]) => {
    const path = materialize(stage4Mutants.find((m) => m.id === id)!)
    const r = await grade({ stage: 4, seed: 6_060, source: { kind: 'dir', path }, only: checksFor(4).map((c) => c.id) })
    expect(r.checks.filter(isFailure).map((c) => c.id)).toEqual([only, 'histories-4'])
    expect(r.checks.some((c) => c.notes.some((n) => String(n).includes('see replay-exact, replay-marked')))).toBe(true)
  })
})

// changed-body-after-replay calls a key "completed" only when its retries showed
// the first answer stored (a 201 that did not execute twice, or a marked replay).
// A layer that forgets a 402 answers its retries with the 402 decided anew, and
// then executes the changed body: that names the missing store, not a stored 402.
describe("changed-body-after-replay's message says what the retries showed of the key", () => {
  const message = async (id: string) => {
    const path = materialize(stage4Mutants.find((m) => m.id === id)!)
    const r = await grade({ stage: 4, seed: 6_060, source: { kind: 'dir', path }, only: ['changed-body-after-replay'] })
    expect(r.checks.map((c) => [c.id, c.status])).toEqual([['changed-body-after-replay', 'fail']])
    return r.checks[0]!.message
  }

  it('a 402 that was never stored (only-success-stored): a first request answered 402, and the missing store is the cause', async () => {
    const got = await message('only-success-stored')
    expect(got).toMatch(
      /under the key of a first request answered 402 executed: nothing showed the 402 stored with the key \(its \d retry\(ies\) got 402 again without Idempotent-Replayed\)/,
    )
    expect(got).toContain('(see replay-stored-402)')
    expect(got).not.toContain('completed')
  }, 120_000)

  it('a stored response replayed to any body (replay-before-fingerprint): the key of a completed 201 gave the stored response', async () => {
    expect(await message('replay-before-fingerprint')).toMatch(/under the key of a completed 201 got the stored response/)
  }, 120_000)
})
