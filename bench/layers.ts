// The cost of each layer on one store: the stage 0 starter and the later
// stages' solutions, each bank on a fresh database of its own with one or
// several instances, all measured interleaved in one run (interleave.ts).
import { interleave, type Measured, type SegmentOptions } from './interleave.ts'
import { type Bank, type StoreName, type Startup, Targets } from './targets.ts'

export type LoadOptions = SegmentOptions & { stages: number[] }

export type LayerResult = Measured & Bank

export type LayersBench = { results: LayerResult[]; startup?: Startup }

/** Every bank of `banks` on `store`, measured; stopped afterwards whatever happened. */
export async function measureLayers(store: StoreName, options: SegmentOptions, banks: Bank[], log: (line: string) => void): Promise<LayersBench> {
  const targets = new Targets(store)
  let results: LayerResult[] = []
  try {
    log(`starting ${banks.length} bank(s) on ${store} (LAB_PROCESSING_DELAY_MS=0, fresh database each)`)
    await targets.start(banks, log)
    const measured = await interleave(targets.list, options, (t) => t.ledgerRows(), log)
    results = measured.map(({ target: { stage, label, instances }, fresh, replay }) => ({ stage, label, instances, fresh, replay }))
  } finally {
    await targets.stop()
  }
  return { results, startup: targets.startup }
}
