// The cost of each layer on SQLite: the stage 0 starter and every later
// SQLite stage's solution, one bank process each, measured interleaved
// (interleave.ts). Stages on PostgreSQL are pgLayers.ts's.
import { interleave, type Measured, type SegmentOptions } from './interleave.ts'
import { Targets } from './targets.ts'

export type LoadOptions = SegmentOptions & { stages: number[] }

export type LayerResult = Measured & { stage: number; label: string }

export async function measureLayers(options: LoadOptions, log: (line: string) => void): Promise<LayerResult[]> {
  const targets = new Targets()
  try {
    log(`starting ${options.stages.length} servers (LAB_PROCESSING_DELAY_MS=0, fresh database each)`)
    await targets.start(options.stages)
    const measured = await interleave(targets.list, options, Targets.ledgerRows, log)
    return measured.map(({ target, fresh, replay }) => ({ stage: target.stage, label: target.label, fresh, replay }))
  } finally {
    await targets.stop()
  }
}
