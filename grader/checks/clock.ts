// Placing requests in time for the checks whose property is a moment (a
// lease's end, a key's expiry). The grader and the server share one clock,
// the host's, so the only uncertainty is when the server acted between our
// send and its answer: each check bounds that moment by the two, never by a
// guess about scheduling.
import { setTimeout as sleep } from 'node:timers/promises'

/** Date.now() has whole milliseconds; bounds derived from it get this much slack. */
export const CLOCK_SLACK_MS = 20

export const sleepUntil = (at: number) => sleep(Math.max(0, at - Date.now()))

/** A request's reply with the two moments that bound when the server decided it. */
export type Timed<T> = { sentAt: number; reply: T; answeredAt: number }

export async function timed<T>(send: () => Promise<T>): Promise<Timed<T>> {
  const sentAt = Date.now()
  const reply = await send()
  return { sentAt, reply, answeredAt: Date.now() }
}
