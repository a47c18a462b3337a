// What stage 6's layer costs on PostgreSQL: the stage 6 solution next to the
// stage 0 starter on the same PostgreSQL server, each with one instance and
// with three on one database (the client spreads requests round-robin), all
// measured interleaved in one run (interleave.ts).
import { interleave, type Measured, type SegmentOptions } from './interleave.ts'
import { type PgStartup, PgTargets } from './pgTargets.ts'

export type PgOptions = SegmentOptions & {
  /** Stage 0 (the baseline) and the PostgreSQL stages to compare with it, with their folders. */
  stages: Array<{ number: number; label: string }>
  /** Bank instances per database, e.g. [1, 3]. */
  instances: number[]
}

export type PgResult = Measured & { stage: number; label: string; instances: number }

export type PgBench = { startup: PgStartup; results: PgResult[] }

export async function measurePg(options: PgOptions, log: (line: string) => void): Promise<PgBench> {
  const targets = new PgTargets()
  let results: PgResult[] = []
  try {
    log(
      `starting PostgreSQL, then ${options.instances.join(' and ')} instance(s) of ${options.stages.map((s) => s.label).join(', ')} (LAB_PROCESSING_DELAY_MS=0)`,
    )
    await targets.start(options.stages, options.instances, log)
    const measured = await interleave(targets.list, options, PgTargets.ledgerRows, log)
    results = measured.map(({ target, fresh, replay }) => ({ stage: target.stage, label: target.label, instances: target.instances, fresh, replay }))
  } finally {
    await targets.stop()
  }
  return { startup: targets.startup, results }
}
