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
  ] as const)('%s fails %s and nothing else of stage 4', async ([id, only]) => {
    const path = materialize(stage4Mutants.find((m) => m.id === id)!)
    const r = await grade({ stage: 4, seed: 6_060, source: { kind: 'dir', path }, only: checksFor(4).map((c) => c.id) })
    expect(r.checks.filter(isFailure).map((c) => c.id)).toEqual([only])
    expect(r.checks.some((c) => c.notes.some((n) => n.includes('see replay-exact, replay-marked')))).toBe(true)
  })
})
