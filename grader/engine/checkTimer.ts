// A check's time limit measures the check, not the machine's start-up speed:
// time spent getting instances and starting servers (a restart after a crash,
// an extra instance) is left out, so a slow start inside a check is never a
// check timeout.

export class TimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`timed out after ${timeoutMs} ms`)
  }
}

/**
 * Rejects with TimeoutError once the check has used `timeoutMs` of its own
 * time: the time since it began, less `startingMs(now)`, what it spent
 * starting servers meanwhile.
 */
export function checkTimeLimit(timeoutMs: number, startingMs: (now: number) => number): { expired: Promise<never>; cancel(): void } {
  const t0 = performance.now()
  const used = () => {
    const now = performance.now()
    return now - t0 - startingMs(now)
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
