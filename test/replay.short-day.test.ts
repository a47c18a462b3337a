// A short generated day (about 500 attempts, fixed seed), replayed with real
// faults: the unprotected stage moves money twice, the last stage does no
// damage at all.
import { describe, expect, it } from 'vitest'
import { generateDay } from '../logs/generator.ts'
import { CATEGORIES, totalDamage, type DamageReport } from '../replay/damage.ts'
import { replayStage } from '../replay/run.ts'

const SEED = 7
const day = { text: generateDay({ seed: SEED, attempts: 500 }), file: `generated (seed ${SEED}, 500 attempts)` }
const rerun = (stage: number) =>
  `npm run logs:generate -- --seed ${SEED} --requests 500 --out /tmp/short.jsonl && npm run replay -- ${stage} --solution --day /tmp/short.jsonl`

const summary = (r: DamageReport) =>
  `${CATEGORIES.map((c) => `${c.id} ${r[c.id]}`).join(', ')}\nexamples: ${JSON.stringify(r.examples, null, 2)}\nanomalies: ${r.anomalies.join('\n')}\nrerun: ${rerun(r.stage)}`

describe('replaying a short day', () => {
  it('stage 0 (solution) duplicates the retried transfers', { timeout: 90_000 }, async () => {
    const r = await replayStage({ stage: 0, source: { kind: 'solution' }, day })
    expect(r.anomalies, summary(r)).toEqual([])
    expect(r.duplicateTransfers, summary(r)).toBeGreaterThan(0)
    expect(r.byKind['gateway-timeout'].duplicateTransfers + r.byKind['reserialized-retry'].duplicateTransfers, summary(r)).toBeGreaterThan(0)
    expect(r.byKind['double-tap'].duplicateTransfers, summary(r)).toBeGreaterThan(0)
    // The faults really happened: responses dropped, connections reset, the server killed with requests inside.
    expect(r.faults.dropResponse).toBeGreaterThan(0)
    expect(r.faults.resetBefore).toBeGreaterThan(0)
    expect(r.faults.restarts).toBe(1)
    expect(r.faults.cutByRestart).toBeGreaterThan(0)
  })

  it('stage 5 (solution) does no damage of any kind', { timeout: 90_000 }, async () => {
    const r = await replayStage({ stage: 5, source: { kind: 'solution' }, day })
    expect(r.anomalies, summary(r)).toEqual([])
    expect(totalDamage(r), summary(r)).toBe(0)
    for (const c of CATEGORIES) expect(r[c.amount], c.amount).toBe(0)
    expect(r.faults.restarts).toBe(1)
    expect(r.faults.cutByRestart).toBeGreaterThan(0)
  })
})
