// The measurement loop every load bench shares: round after round, each
// target runs one short fresh segment and one short replay segment, so that a
// slow minute on the shared machine lands on every target alike and cancels
// out of the ratios.
import { type LoadTarget, runSegment, type Segment } from './load.ts'
import { type Figures, summarize } from './stats.ts'
import { ACCEPT, freshWorkload, MODES, type Mode, REPLAY_KEYS, replayWorkload } from './workloads.ts'

export type SegmentOptions = {
  rounds: number
  /** Length of one measured segment. */
  seconds: number
  connections: number
}

export type Measured = {
  fresh: Figures
  replay: Figures & {
    /** Ledger rows added per replayed request: 1 means retries execute again, 0 means they do not. */
    executedPerReplay: number
  }
}

type Tally<T> = { target: T; segments: Record<Mode, Segment[]>; sent: Record<Mode, number> }

/** Measures every target, interleaved; `ledgerRows` counts the transfers a target really executed. */
export async function interleave<T extends LoadTarget>(
  targets: T[],
  options: SegmentOptions,
  ledgerRows: (target: T) => number | Promise<number>,
  log: (line: string) => void,
): Promise<Array<Measured & { target: T }>> {
  const tallies: Tally<T>[] = targets.map((target) => ({ target, segments: { fresh: [], replay: [] }, sent: { fresh: 0, replay: 0 } }))
  const workloads = new Map(targets.map((t) => [t, { fresh: freshWorkload(t), replay: replayWorkload(t) }]))
  const run = async (tally: Tally<T>, mode: Mode, until: { durationMs: number } | { requests: number }) => {
    const segment = await runSegment(tally.target, workloads.get(tally.target)![mode], ACCEPT[mode], until, options.connections)
    tally.sent[mode] += segment.requests
    return segment
  }

  // Prefill: the keys the replay workload will retry, each executed once.
  // Then a short unmeasured warm-up of both workloads, so every server's JIT
  // and database page cache are warm before the first measured round.
  const warmupMs = Math.min(1, options.seconds) * 1000
  for (const tally of tallies) {
    await run(tally, 'replay', { requests: REPLAY_KEYS })
    for (const mode of MODES) await run(tally, mode, { durationMs: warmupMs })
  }

  for (let r = 0; r < options.rounds; r++) {
    // Rotate who goes first, and alternate the mode order, so no target is
    // always measured right after the same neighbour.
    const order = tallies.map((_, i) => tallies[(i + r) % tallies.length]!)
    const modes = r % 2 === 0 ? MODES : [...MODES].reverse()
    for (const tally of order) for (const mode of modes) tally.segments[mode].push(await run(tally, mode, { durationMs: options.seconds * 1000 }))
    log(`round ${r + 1}/${options.rounds} done`)
  }

  const results = []
  for (const tally of tallies) {
    const executed = (await ledgerRows(tally.target)) - tally.sent.fresh - REPLAY_KEYS
    const replayed = tally.sent.replay - REPLAY_KEYS
    results.push({
      target: tally.target,
      fresh: summarize(tally.segments.fresh),
      replay: { ...summarize(tally.segments.replay), executedPerReplay: replayed > 0 ? executed / replayed : 0 },
    })
  }
  return results
}
