// Turning segments into figures: throughput, percentiles, ratios.
import type { Segment } from './load.ts'

export type Figures = {
  /** Requests per second over all measured rounds together. */
  throughput: number
  p50Ms: number
  p99Ms: number
  requests: number
  /** Throughput of each round, in the order the rounds ran. */
  roundThroughputs: number[]
  outcomes: Record<string, number>
  /** Server main-thread CPU per request, in µs, all instances together (null where it cannot be read). */
  cpuUsPerRequest: number | null
  /** Database server CPU per request, in µs (null for SQLite: it runs on the server's thread, so cpuUsPerRequest has it). */
  databaseCpuUsPerRequest: number | null
}

export const perSecond = (requests: number, ms: number) => (ms > 0 ? (requests * 1000) / ms : 0)

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return 0
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!
}

export function summarize(segments: Segment[]): Figures {
  const requests = segments.reduce((n, s) => n + s.requests, 0)
  const elapsed = segments.reduce((n, s) => n + s.elapsedMs, 0)
  // A typed array sorts numerically (a plain array would sort as strings).
  const sorted = Float64Array.from(segments.flatMap((s) => s.latenciesMs)).sort()
  const outcomes: Record<string, number> = {}
  for (const s of segments) for (const [k, v] of Object.entries(s.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v
  const perRequest = (read: (s: Segment) => number | null) => {
    if (requests === 0 || !segments.every((s) => read(s) !== null)) return null
    return (segments.reduce((n, s) => n + read(s)!, 0) * 1000) / requests
  }
  return {
    throughput: perSecond(requests, elapsed),
    cpuUsPerRequest: perRequest((s) => s.serverCpuMs),
    databaseCpuUsPerRequest: perRequest((s) => s.databaseCpuMs),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    requests,
    roundThroughputs: segments.map((s) => perSecond(s.requests, s.elapsedMs)),
    outcomes,
  }
}

/**
 * Ratio of `a` to `base`, round by round. Rounds are interleaved, so round i
 * of both ran within seconds of each other: the spread of these per-round
 * ratios shows how much the machine's drift still leaks into the figure.
 */
export function roundRatios(a: Figures, base: Figures): number[] {
  return a.roundThroughputs.map((t, i) => (base.roundThroughputs[i] ? t / base.roundThroughputs[i]! : 0))
}

export const round = (x: number, digits = 2) => Number(x.toFixed(digits))
