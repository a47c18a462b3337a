// The concurrency checks of stage 1 say what they saw and list the causes it
// fits as candidates: the grader sees behaviour, not code, so a learner who
// wrote an awaited SELECT-then-INSERT must not be told about a lock in memory
// they never wrote, nor the other way round.
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'
import { stage1Mutants } from '#grader/mutants/stage1.ts'
import { grade } from '#grader/grade.ts'

const checkThenInsert = stage1Mutants.find((m) => m.id === 'check-then-insert')!
/**
 * check-then-insert with a window of its own (an awaited lookup of 200 ms),
 * not the server's processing delay: two-instances-one-database, which sets
 * none, then sees it every run.
 */
const awaitedLookup: Mutant = {
  ...checkThenInsert,
  id: 'awaited-lookup-200ms',
  mustFail: 'two-instances-one-database',
  edits: checkThenInsert.edits.map((e) => (e.replace === 'createKeyStore(db, config.processingDelayMs)' ? { ...e, replace: 'createKeyStore(db, 200)' } : e)),
}

async function failure(mutantId: string, checkId: string) {
  const path = materialize([...stage1Mutants, awaitedLookup].find((m) => m.id === mutantId)!)
  const r = await grade({ stage: 1, seed: 3, source: { kind: 'dir', path }, only: [checkId] })
  const [check] = r.checks
  expect(check!.status, `${mutantId} on ${checkId}: ${r.rerun}`).toBe('fail')
  return check!
}

const ALL_CANDIDATES = [
  'a SELECT for the key, then an INSERT with an await between them',
  'an INSERT OR IGNORE whose result is not looked at',
  'the key recorded only after executing',
]

describe('stage 1 concurrency failures: evidence, then candidates', () => {
  it('an awaited SELECT-then-INSERT on two processes: one process let several through; no lock in memory named', async () => {
    const c = await failure('awaited-lookup-200ms', 'two-instances-one-database')
    expect(c.message).toMatch(/split \d+ and \d+ over 2 processes on one database, moved the money \d+ times/)
    expect(c.message).toMatch(/executed \(201\): \d+ in process 1, \d+ in process 2\. One process let \d+ through by itself/)
    for (const candidate of ALL_CANDIDATES) expect(c.message).toContain(candidate)
    expect(c.message).not.toContain('lock in memory')
  }, 120_000)

  it('a lock in memory (in-memory-lock): one copy per process, and the candidates that fits', async () => {
    const c = await failure('in-memory-lock', 'two-instances-one-database')
    expect(c.message).toContain(
      'executed (201): 1 in process 1, 1 in process 2. Each process let one copy through, as if each decided alone. Candidates: a lock in memory',
    )
  }, 120_000)

  it('one process (check-then-insert on simultaneous-retries): how many got past the claim, and the candidates', async () => {
    const c = await failure('check-then-insert', 'simultaneous-retries')
    expect(c.message).toMatch(
      /^\d+ simultaneous requests with one Idempotency-Key moved the money \d+ times: \d+ got past the claim into the core at the same instant/,
    )
    for (const candidate of ALL_CANDIDATES) expect(c.message).toContain(candidate)
  }, 120_000)

  it('the hints name candidates, not one diagnosis', () => {
    const hint = (id: string) => checksFor(1).find((c) => c.id === id)!.hint
    expect(hint('simultaneous-retries')).toMatch(/SELECT-then-INSERT with an await.*INSERT OR IGNORE.*recorded only after executing/)
    expect(hint('two-instances-one-database')).toMatch(/lock in memory.*SELECT-then-INSERT across an await.*INSERT OR IGNORE/)
    expect(hint('two-instances-one-database')).not.toMatch(/^A lock in memory/)
  })
})
