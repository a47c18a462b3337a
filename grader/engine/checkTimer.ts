// A check's time limit measures the check, not the machine's start-up speed:
// time spent getting instances and starting servers (a restart after a crash,
// an extra instance) is left out, so a slow start inside a check is never a
// check timeout.
import { type Phrase, phrases } from '#harness/i18n/phrase.ts'

// What a timeout tells the learner, as a template the packs translate (i18n/<lang>.json, "messages": checkTimer.<key>).
const say = phrases('checkTimer', { timedOut: 'timed out after {ms} ms' })

export class TimeoutError extends Error {
  /** The message in the learner's language (its English is the message). */
  readonly said: Phrase
  constructor(timeoutMs: number) {
    const said = say('timedOut', { ms: timeoutMs })
    super(String(said))
    this.said = said
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
