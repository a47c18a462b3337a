// Stage 5 (scope and TTL): the reference solution passes the whole cumulative
// grade, the starter fails this stage's checks, and every stage 5 mutant fails
// the check aimed at it on every seed where the solution passes that check.
// (npm run test:repeat runs the same over 20 seeds.)
//
// Every grade is queued at once, two at a time (one per core: each grade is a
// handful of real server processes), and each test awaits its own.
import { rmSync } from 'node:fs'
import pLimit from 'p-limit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { stage5Mutants } from '#grader/mutants/stage5.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { grade, type GradeOptions, type GradeResult } from '#grader/runner.ts'

const SEEDS = [11, 5_001, 90_210]
const stageChecks = checksFor(5).map((c) => c.id)
const failures = (r: GradeResult) => r.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.message} (${r.rerun})`)

const queue = pLimit(2)
const jobs = new Map<string, Promise<GradeResult>>()
const checkouts: string[] = []
function enqueue(name: string, options: Omit<GradeOptions, 'stage'>) {
  const job = queue(() => grade({ stage: 5, ...options }))
  job.catch(() => undefined) // awaited by its test
  jobs.set(name, job)
}

beforeAll(() => {
  // The solution: the whole course on two seeds, stage 5 on the third (so it
  // passes every mutant's check on every seed used below).
  SEEDS.forEach((seed, i) => enqueue(`solution ${seed}`, { seed, source: { kind: 'solution' }, only: i < 2 ? undefined : stageChecks }))
  enqueue('starter', { seed: SEEDS[0]!, source: { kind: 'starter' }, only: stageChecks })
  for (const mutant of stage5Mutants) {
    const path = materialize(mutant)
    checkouts.push(path)
    for (const seed of SEEDS) enqueue(`${mutant.id} ${seed}`, { seed, source: { kind: 'dir', path }, only: [mutant.mustFail] })
  }
})

afterAll(async () => {
  await Promise.allSettled(jobs.values())
  for (const path of checkouts) rmSync(path, { recursive: true, force: true })
})

describe('stage 5 (scope-ttl)', () => {
  it('the solution passes the cumulative grade (stages 0 to 5) on two seeds, and stage 5 on a third', async () => {
    for (const seed of SEEDS) expect(failures(await jobs.get(`solution ${seed}`)!)).toEqual([])
    const full = await jobs.get(`solution ${SEEDS[0]}`)!
    expect(full.checks.filter((c) => c.stage === 5).map((c) => c.id)).toEqual(stageChecks)
    expect(new Set(full.checks.map((c) => c.stage))).toEqual(new Set([0, 1, 2, 3, 4, 5]))
  })

  it("the starter fails this stage's checks, and names them", async () => {
    const r = await jobs.get('starter')!
    // What the starter lacks: the scope, the expiry, the purge and the published policy.
    // (A replay within the TTL is stage 4's replay, which the starter keeps.)
    expect(r.checks.filter((c) => !c.passed).map((c) => c.id)).toEqual(stageChecks.filter((id) => id !== 'replay-before-expiry'))
  })

  it.for(stage5Mutants)('mutant $id fails its check on every seed', async (mutant) => {
    for (const seed of SEEDS) {
      const r = await jobs.get(`${mutant.id} ${seed}`)!
      expect(r.checks.map((c) => [c.id, c.passed]), `${mutant.id}: ${r.rerun}`).toEqual([[mutant.mustFail, false]])
    }
  })
})
