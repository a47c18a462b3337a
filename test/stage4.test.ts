// Stage 4 (replay): the reference solution passes the whole cumulative
// grade, the starter fails this stage's checks, and every stage 4 mutant fails
// the check aimed at it on every seed where the solution passes that check.
// (npm run test:repeat runs the same over 20 seeds.) The tests run
// concurrently, but their grades queue for two slots, one per core: each grade
// is a handful of real server processes.
import { rmSync } from 'node:fs'
import pLimit from 'p-limit'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { stage4Mutants } from '#grader/mutants/stage4.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { grade, type GradeResult } from '#grader/runner.ts'

const SEEDS = [4, 6_060, 81_004]
const stageChecks = checksFor(4).map((c) => c.id)
const failures = (r: GradeResult) => r.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.message} (${r.rerun})`)
const twoAtATime = pLimit(2)

describe.concurrent('stage 4 (replay)', () => {
  it('the solution passes the cumulative grade (stages 0 to 4) on two seeds, and stage 4 on the third', async () => {
    const results = await Promise.all(
      SEEDS.map((seed, i) => twoAtATime(() => grade({ stage: 4, seed, source: { kind: 'solution' }, only: i < 2 ? undefined : stageChecks }))),
    )
    for (const r of results) expect(failures(r)).toEqual([])
    expect(results[0]!.checks.filter((c) => c.stage === 4).map((c) => c.id)).toEqual(stageChecks)
    // Hence the solution passes each mutant's check on every seed below.
  })

  it("the starter fails this stage's checks, and names them", async () => {
    const r = await twoAtATime(() => grade({ stage: 4, seed: SEEDS[0]!, source: { kind: 'starter' }, only: stageChecks }))
    // The starter answers a completed duplicate with stage 3's 200 already-processed: no check can pass.
    expect(r.checks.filter((c) => !c.passed).map((c) => c.id)).toEqual(stageChecks)
  })

  it.for(stage4Mutants)('mutant $id fails its check on every seed', async (mutant) => {
    const path = materialize(mutant)
    try {
      const results = await Promise.all(
        SEEDS.map((seed) => twoAtATime(() => grade({ stage: 4, seed, source: { kind: 'dir', path }, only: [mutant.mustFail] }))),
      )
      for (const r of results) expect(r.checks.map((c) => [c.id, c.passed]), `${mutant.id}: ${r.rerun}`).toEqual([[mutant.mustFail, false]])
    } finally {
      rmSync(path, { recursive: true, force: true })
    }
  })
})
