// Stage 3 (in-progress): the reference solution passes the whole cumulative
// grade, the starter fails this stage's checks, and every stage 3 mutant fails
// the check aimed at it on every seed where the solution passes that check.
// (npm run test:repeat runs the same over 20 seeds.) The tests run
// concurrently, but their grades queue for two slots, one per core: each grade
// is a handful of real server processes.
import { rmSync } from 'node:fs'
import pLimit from 'p-limit'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { stage3Mutants } from '#grader/mutants/stage3.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { grade, type GradeResult } from '#grader/runner.ts'

const SEEDS = [3, 4_242, 77_003]
const stageChecks = checksFor(3).map((c) => c.id)
const failures = (r: GradeResult) => r.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.message} (${r.rerun})`)
const twoAtATime = pLimit(2)

describe.concurrent('stage 3 (in-progress)', () => {
  it('the solution passes the cumulative grade (stages 0 to 3) on two seeds, and stage 3 on the third', async () => {
    const results = await Promise.all(
      SEEDS.map((seed, i) => twoAtATime(() => grade({ stage: 3, seed, source: { kind: 'solution' }, only: i < 2 ? undefined : stageChecks }))),
    )
    for (const r of results) expect(failures(r)).toEqual([])
    expect(results[0]!.checks.filter((c) => c.stage === 3).map((c) => c.id)).toEqual(stageChecks)
    // Hence the solution passes each mutant's check on every seed below.
  })

  it("the starter fails this stage's checks, and names them", async () => {
    const r = await twoAtATime(() => grade({ stage: 3, seed: SEEDS[0]!, source: { kind: 'starter' }, only: stageChecks }))
    // What the starter lacks: the in-progress state, the lease, the owner check and the release.
    // (A different payload in flight already gets 422 from stage 2's fingerprint, which the starter keeps.)
    expect(r.checks.filter((c) => !c.passed).map((c) => c.id)).toEqual(stageChecks.filter((id) => id !== 'in-flight-different-payload-422'))
  })

  it.for(stage3Mutants)('mutant $id fails its check on every seed', async (mutant) => {
    const path = materialize(mutant)
    try {
      const results = await Promise.all(
        SEEDS.map((seed) => twoAtATime(() => grade({ stage: 3, seed, source: { kind: 'dir', path }, only: [mutant.mustFail] }))),
      )
      for (const r of results) expect(r.checks.map((c) => [c.id, c.passed]), `${mutant.id}: ${r.rerun}`).toEqual([[mutant.mustFail, false]])
    } finally {
      rmSync(path, { recursive: true, force: true })
    }
  })
})
