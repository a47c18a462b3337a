// A check's time limit measures the check, not the machine's start-up speed:
// time its servers spend starting (a restart after a crash, an extra instance)
// is left out, so a slow start inside a check is never a check timeout.
import type { ServerProcess } from '#harness/spawnServer.ts'

export class TimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`)
  }
}

/**
 * Rejects with TimeoutError once the check has used `timeoutMs` of its own
 * time. `servers()` lists every server the check can start or restart.
 */
export function checkTimeLimit(timeoutMs: number, servers: () => ServerProcess[]): { expired: Promise<never>; cancel(): void } {
  const t0 = performance.now()
  const baseline = new Map(servers().map((s) => [s, s.startingMs(t0)]))
  const used = () => {
    const now = performance.now()
    const starting = servers().reduce((sum, s) => sum + s.startingMs(now) - (baseline.get(s) ?? 0), 0)
    return now - t0 - starting
  }
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    const arm = () => {
      const left = timeoutMs - used()
      if (left <= 0) reject(new TimeoutError(timeoutMs))
      else timer = setTimeout(arm, left)
    }
    arm()
  })
  expired.catch(() => {}) // a check that finished first leaves nobody listening
  return { expired, cancel: () => clearTimeout(timer) }
}
