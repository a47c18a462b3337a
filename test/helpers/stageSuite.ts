// The tests every stage owes, on the stage's pinned seed (scripts/pinnedSeeds.ts):
// its reference solution passes the whole cumulative grade, its starter fails
// this stage's checks (and names them), and each of its mutants fails the
// check aimed at it. One seed keeps npm test to minutes: the repetitions
// (npm run test:repeat, in CI) grade the same over 20 more.
//
// Every grade is queued up front, two at a time (each grade is a handful of
// real server processes; the machine has two cores), and each test awaits
// its own.
import { isFailure } from '#grader/engine/checkResult.ts'
import pLimit from 'p-limit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { stageByNumber } from '#harness/course.ts'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'
import { grade, type GradeOptions, type GradeResult } from '#grader/grade.ts'
import { PINNED_SEEDS, REGRESSION_SEEDS } from '#scripts/pinnedSeeds.ts'
import { runPostgres } from './postgres.ts'

export const failures = (r: GradeResult) => r.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.message} (${r.rerun})`)

export type StageSuite = {
  mutants: Mutant[]
  /** Checks of this stage the starter passes, because an earlier layer already gives them. */
  starterPasses?: string[]
}

export function stageSuite(stage: number, { mutants, starterPasses = [] }: StageSuite) {
  const { slug } = stageByNumber(stage)
  const seed = PINNED_SEEDS[stage]!.test
  const regressions = REGRESSION_SEEDS.filter((r) => r.stage === stage)
  const stageChecks = checksFor(stage).map((c) => c.id)
  const queue = pLimit(2)
  const jobs = new Map<string, Promise<GradeResult>>()
  // A stage on PostgreSQL grades on the run's server (test/setup/postgres.ts), each grade making and dropping its own databases.
  const onDatabase = async () => (stageByNumber(stage).database === 'postgres' ? { postgres: await runPostgres() } : {})
  const enqueue = (name: string, options: Omit<GradeOptions, 'stage'>) => {
    const job = queue(async () => grade({ stage, ...options, ...(await onDatabase()) }))
    job.catch(() => undefined) // awaited by its test
    jobs.set(name, job)
  }

  beforeAll(() => {
    enqueue('solution', { seed, source: { kind: 'solution' } })
    // Verdicts only: the starter's failing history is not shrunk (GradeOptions.shrink).
    enqueue('starter', { seed, source: { kind: 'starter' }, only: stageChecks, shrink: false })
    for (const { check, seed } of regressions) enqueue(`${check}@${seed}`, { seed, source: { kind: 'solution' }, only: [check] })
    for (const mutant of mutants) enqueue(mutant.id, { seed, source: { kind: 'dir', path: materialize(mutant) }, only: [mutant.mustFail] })
  })

  afterAll(async () => {
    await Promise.allSettled(jobs.values())
  })

  describe(`stage ${stage} (${slug}), seed ${seed}`, () => {
    it(`the solution passes the cumulative grade (stages 0 to ${stage})`, async () => {
      const full = await jobs.get('solution')!
      expect(failures(full)).toEqual([])
      expect(full.checks.filter((c) => c.stage === stage).map((c) => c.id)).toEqual(stageChecks)
      expect(new Set(full.checks.map((c) => c.stage))).toEqual(new Set(Array.from({ length: stage + 1 }, (_, i) => i)))
    }, 300_000) // a whole grade, two at a time, with room for a machine many times slower than this one

    // Stage 0 has no histories check: the pass-through layer has no model to judge.
    if (stageChecks.includes(`histories-${stage}`))
      it('its histories reach every transition of the model they can reach, and none the model does not list', async () => {
        const full = await jobs.get('solution')!
        const coverage = full.checks.find((c) => c.id === `histories-${stage}`)?.coverage
        expect(coverage?.length).toBeGreaterThan(0)
        expect(coverage!.filter((c) => !c.unreachable && c.histories === 0).map((c) => c.transition)).toEqual([])
        expect(coverage!.filter((c) => c.transition.endsWith("(not in the model's list)"))).toEqual([])
      })

    it.for(regressions)('the solution passes $check on seed $seed, where it once failed by the check’s fault', async ({ check, seed }) => {
      const r = await jobs.get(`${check}@${seed}`)!
      expect(failures(r), r.rerun).toEqual([])
      expect(r.checks.map((c) => c.id)).toEqual([check])
    })

    it("the starter fails this stage's checks, and names them", async () => {
      const r = await jobs.get('starter')!
      expect(r.checks.filter((c) => !c.passed).map((c) => c.id)).toEqual(stageChecks.filter((id) => !starterPasses.includes(id)))
      // The histories check runs whatever failed before it, and is the stage's last: never the first failure a learner meets.
      const histories = r.checks.find((c) => c.id === `histories-${stage}`)
      if (histories) {
        expect([histories.status, histories.points]).toEqual(['fail', 0])
        expect(r.checks.filter((c) => c.stage === stage).at(-1)?.id).toBe(histories.id)
      }
    })

    it.for(mutants)('mutant $id fails its check', async (mutant) => {
      const r = await jobs.get(mutant.id)!
      expect(
        r.checks.map((c) => [c.id, isFailure(c)]),
        `${mutant.id}: ${r.rerun}`,
      ).toEqual([[mutant.mustFail, true]])
    })
  })
}
