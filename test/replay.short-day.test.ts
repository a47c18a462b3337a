// A short generated day (about 500 attempts, fixed seed), replayed with real
// faults: the unprotected stage moves money twice, stage 5 does no damage at
// all, and neither does stage 6 on three instances of one PostgreSQL
// database with one instance SIGKILLed mid-day.
import { describe, expect, it } from 'vitest'
import { generateDay } from '../logs/generator.ts'
import { CATEGORIES, totalDamage, type DamageReport } from '../replay/damage.ts'
import { replayStage } from '../replay/run.ts'
import { ourOrOrphanedPostmasters } from './helpers/procs.ts'

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

  // About 20 s (measured 19 s on 2 loaded cores): one embedded PostgreSQL, three instances started at once.
  it('stage 6 (solution) on three instances, one SIGKILLed, does no damage and leaves no postgres behind', { timeout: 180_000 }, async () => {
    const before = ourOrOrphanedPostmasters()
    const r = await replayStage({ stage: 6, source: { kind: 'solution' }, day })
    expect(r.anomalies, summary(r)).toEqual([])
    expect(totalDamage(r), summary(r)).toBe(0)
    for (const c of CATEGORIES) expect(r[c.amount], c.amount).toBe(0)
    // Round-robin over three instances: each got a share; the one out of rotation while it restarted, a little less.
    const { count, forwarded, killed } = r.instances
    expect(count).toBe(3)
    const all = forwarded.reduce((a, b) => a + b, 0)
    for (const n of forwarded) expect(n, `forwarded ${forwarded.join(' / ')}`).toBeGreaterThan(all / 4)
    // One instance killed, with requests inside; only those were cut, the other instances finished theirs.
    expect(r.faults.restarts).toBe(1)
    expect(killed).toHaveLength(1)
    expect(killed[0]!.heldRequests).toBeGreaterThan(0)
    expect(r.faults.cutByRestart).toBe(killed[0]!.heldRequests)
    expect(ourOrOrphanedPostmasters().filter((pid) => !before.includes(pid))).toEqual([])
  })
})
