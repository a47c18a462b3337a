// The three tests every stage owes: its reference solution passes the whole
// cumulative grade, its starter fails this stage's checks (and names them),
// and each of its mutants fails the check aimed at it on both seeds, seeds on
// which the solution passes that same check. Two seeds keep npm test to
// minutes: npm run test:repeat runs the same over 20 (CI runs it too).
//
// Every grade is queued up front, two at a time (each grade is a handful of
// real server processes; the machine has two cores), and each test awaits
// its own.
import { isFailure } from '#grader/engine/checkResult.ts'
import { rmSync } from 'node:fs'
import pLimit from 'p-limit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { stageByNumber } from '#harness/course.ts'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'
import { grade, type GradeOptions, type GradeResult } from '#grader/grade.ts'
import { startPostgres, type PgServer } from '#harness/postgres.ts'

export const failures = (r: GradeResult) => r.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.message} (${r.rerun})`)

export type StageSuite = {
  /** Two fixed seeds: the first grades the whole course up to this stage, the second this stage only. */
  seeds: [number, number]
  mutants: Mutant[]
  /** Checks of this stage the starter passes, because an earlier layer already gives them. */
  starterPasses?: string[]
}

export function stageSuite(stage: number, { seeds, mutants, starterPasses = [] }: StageSuite) {
  const { slug } = stageByNumber(stage)
  const stageChecks = checksFor(stage).map((c) => c.id)
  const queue = pLimit(2)
  const jobs = new Map<string, Promise<GradeResult>>()
  const checkouts: string[] = []
  // A stage on PostgreSQL: one server for all its grades, each making and dropping its own databases.
  let postgres: Promise<PgServer> | undefined
  const shared = async () => (stageByNumber(stage).database === 'postgres' ? { postgres: await (postgres ??= startPostgres()) } : {})
  const enqueue = (name: string, options: Omit<GradeOptions, 'stage'>) => {
    const job = queue(async () => grade({ stage, ...options, ...(await shared()) }))
    job.catch(() => undefined) // awaited by its test
    jobs.set(name, job)
  }

  beforeAll(() => {
    seeds.forEach((seed, i) => enqueue(`solution ${seed}`, { seed, source: { kind: 'solution' }, only: i === 0 ? undefined : stageChecks }))
    enqueue('starter', { seed: seeds[0], source: { kind: 'starter' }, only: stageChecks })
    for (const mutant of mutants) {
      const path = materialize(mutant)
      checkouts.push(path)
      for (const seed of seeds) enqueue(`${mutant.id} ${seed}`, { seed, source: { kind: 'dir', path }, only: [mutant.mustFail] })
    }
  })

  afterAll(async () => {
    await Promise.allSettled(jobs.values())
    await (await postgres)?.stop()
    for (const path of checkouts) rmSync(path, { recursive: true, force: true })
  })

  describe(`stage ${stage} (${slug})`, () => {
    it(`the solution passes the cumulative grade (stages 0 to ${stage}) on one seed, and stage ${stage} on another`, async () => {
      for (const seed of seeds) expect(failures(await jobs.get(`solution ${seed}`)!)).toEqual([])
      const full = await jobs.get(`solution ${seeds[0]}`)!
      expect(full.checks.filter((c) => c.stage === stage).map((c) => c.id)).toEqual(stageChecks)
      expect(new Set(full.checks.map((c) => c.stage))).toEqual(new Set(Array.from({ length: stage + 1 }, (_, i) => i)))
    }, 300_000) // a whole grade and a stage's, two at a time, with room for a machine many times slower than this one

    it("the starter fails this stage's checks, and names them", async () => {
      const r = await jobs.get('starter')!
      expect(r.checks.filter((c) => !c.passed).map((c) => c.id)).toEqual(stageChecks.filter((id) => !starterPasses.includes(id)))
      // The histories check waits for the stage's own checks: never the first failure a learner meets.
      const histories = r.checks.find((c) => c.id === `histories-${stage}`)
      if (histories) expect([histories.status, histories.points, histories.blockedBy]).toEqual(['not-judged', 0, expect.any(String)])
    })

    it.for(mutants)('mutant $id fails its check on both seeds', async (mutant) => {
      for (const seed of seeds) {
        const r = await jobs.get(`${mutant.id} ${seed}`)!
        expect(
          r.checks.map((c) => [c.id, isFailure(c)]),
          `${mutant.id}: ${r.rerun}`,
        ).toEqual([[mutant.mustFail, true]])
      }
    })
  })
}
