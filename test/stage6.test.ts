// Stage 6 (production, on PostgreSQL): the solution passes stage 6's checks,
// the starter fails them, each mutant fails its check, and no postgres process
// outlives the grades. Each grade starts its own embedded PostgreSQL; to keep
// this file near three minutes (180 s measured) it grades stage 6's checks only, on one seed
// (npm run test:repeat -- solution-6 runs the cumulative grade over 20).
import { isFailure } from '#grader/engine/checkResult.ts'
import { rmSync } from 'node:fs'
import pLimit from 'p-limit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'
import { stage6Mutants } from '#grader/mutants/stage6.ts'
import { grade, type GradeOptions, type GradeResult } from '#grader/grade.ts'
import { ourOrOrphanedPostmasters } from './helpers/procs.ts'
import { failures } from './helpers/stageSuite.ts'

const SEED = 6_006
const stageChecks = checksFor(6).map((c) => c.id)
/**
 * Seeds on which the solution once failed a check through the check's own
 * fault, each graded on that check alone. 507735: small-pool drew four
 * transfers from an account that opened with less than their sum (a 402).
 */
const REGRESSION_SEEDS: Array<{ check: string; seed: number }> = [{ check: 'small-pool-answers-duplicates', seed: 507_735 }]

const queue = pLimit(2)
const jobs = new Map<string, Promise<GradeResult>>()
const checkouts: string[] = []
let before: number[] = []
const enqueue = (name: string, options: Omit<GradeOptions, 'stage' | 'seed'>, seed = SEED) => {
  const job = queue(() => grade({ stage: 6, seed, ...options }))
  job.catch(() => undefined) // awaited by its test
  jobs.set(name, job)
}

beforeAll(() => {
  before = ourOrOrphanedPostmasters()
  enqueue('solution', { source: { kind: 'solution' }, only: stageChecks })
  enqueue('starter', { source: { kind: 'starter' }, only: stageChecks })
  for (const { check, seed } of REGRESSION_SEEDS) enqueue(`${check}@${seed}`, { source: { kind: 'solution' }, only: [check] }, seed)
  for (const mutant of stage6Mutants) {
    const path = materialize(mutant)
    checkouts.push(path)
    enqueue(mutant.id, { source: { kind: 'dir', path }, only: [mutant.mustFail] })
  }
})

afterAll(async () => {
  await Promise.allSettled(jobs.values())
  for (const path of checkouts) rmSync(path, { recursive: true, force: true })
})

describe('stage 6 (production)', () => {
  it("the solution passes stage 6's checks", async () => {
    const r = await jobs.get('solution')!
    expect(failures(r)).toEqual([])
    expect(r.checks.map((c) => c.id)).toEqual(stageChecks)
  }, 300_000)

  it.for(REGRESSION_SEEDS)(
    'the solution passes $check on seed $seed, where it once failed by the check’s fault',
    { timeout: 300_000 },
    async ({ check, seed }) => {
      const r = await jobs.get(`${check}@${seed}`)!
      expect(failures(r), r.rerun).toEqual([])
      expect(r.checks.map((c) => c.id)).toEqual([check])
    },
  )

  it("the starter (instance clock, unbatched purge) fails stage 6's clock checks: leases, and the purge's", async () => {
    const r = await jobs.get('starter')!
    expect(r.checks.filter((c) => isFailure(c)).map((c) => c.id)).toEqual(['skewed-clocks', 'purge-spares-live-claims'])
    // The histories check waits for the stage's own checks.
    expect(r.checks.find((c) => c.id === 'histories-6')?.status).toBe('not-judged')
  }, 300_000)

  it.for(stage6Mutants)('mutant $id fails its check', { timeout: 300_000 }, async (mutant: Mutant) => {
    const r = await jobs.get(mutant.id)!
    expect(
      r.checks.map((c) => [c.id, isFailure(c)]),
      `${mutant.id}: ${r.rerun}`,
    ).toEqual([[mutant.mustFail, true]])
  })

  it('leaves no postgres process behind', async () => {
    await Promise.allSettled(jobs.values())
    expect(ourOrOrphanedPostmasters().filter((pid) => !before.includes(pid))).toEqual([])
  }, 300_000)
})
