// The categories that every reference solution keeps at zero are not dead
// weight: the known-wrong implementations that cause them show up in the
// replay of a short day, each in its own category.
import { describe, expect, it } from 'vitest'
import { mutants } from '#grader/mutants/index.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { generateDay } from '../logs/generator.ts'
import type { DamageReport } from '../replay/damage.ts'
import { replayStage } from '../replay/run.ts'

const SEED = 7
const day = { text: generateDay({ seed: SEED, attempts: 500 }), file: `generated (seed ${SEED}, 500 attempts)` }

async function replayMutant(id: string): Promise<DamageReport> {
  const mutant = mutants.find((m) => m.id === id)!
  const checkout = materialize(mutant)
  return await replayStage({ stage: mutant.stage, source: { kind: 'dir', path: checkout }, day })
}

describe('replaying a short day against known-wrong implementations', () => {
  it('a fingerprint over the raw body text answers 422 to re-serialized retries', { timeout: 90_000 }, async () => {
    const r = await replayMutant('raw-body-fingerprint')
    expect(r.byKind['reserialized-retry'].spurious422s, JSON.stringify(r.examples)).toBeGreaterThan(0)
    expect(r.byKind['reserialized-retry'].lostTransfers).toBe(0) // the first attempt had executed
  })

  it('an in_progress claim without a lease leaves the keys of the restart stuck at 409', { timeout: 90_000 }, async () => {
    const r = await replayMutant('no-lease')
    expect(r.byKind['server-restart'].stuckKeys, JSON.stringify(r.examples)).toBeGreaterThan(0)
    expect(r.byKind['server-restart'].lostTransfers).toBe(r.byKind['server-restart'].stuckKeys)
  })
})
