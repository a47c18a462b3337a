// Placing requests in time for the checks whose property is a moment: a
// lease's end, a key's expiry, a purge. The grade owns the clock its servers
// and its database read (harness/gradeClock.ts), so a check moves it to the
// moment it wants and sends the request there:
// - the last millisecond inside a period (a lease, a TTL) and the first one
//   outside it, both exactly: a period P begun at t holds at t + P - 1 and
//   has ended at t + P;
// - in no wall time, whatever the machine's load.
//
// On a real clock (a --server without PUT /admin/clock, or a check run again
// on the host clock: runCheck.ts) the same check waits instead, and a moment is
// only known between two readings of the clock; the probes then stand a
// margin inside and outside the boundary, and a probe that was decided too
// late to tell makes the round inconclusive instead of failing it.
import type { GradeClock } from '#harness/gradeClock.ts'
import { fail, type CheckContext } from '../engine/check.ts'
import { type Line, phrases } from '#harness/i18n/phrase.ts'

/** Date.now() has whole milliseconds; on a real clock, bounds derived from it get this much slack. */
export const CLOCK_SLACK_MS = 20

/** When something happened: exactly (from === to) on a controlled clock, between two readings on a real one. */
export type Moment = { from: number; to: number }

/** Runs `act` and says when it happened: a controlled clock stands still while it runs. */
export async function momentOf<T>(clock: GradeClock, act: () => Promise<T>): Promise<{ at: Moment; value: T }> {
  const from = clock.now()
  const value = await act()
  return { at: { from, to: clock.now() }, value }
}

export const isExact = (at: Moment) => at.from === at.to

/**
 * The last moment still inside a period `periodMs` long that began at `start`:
 * its last millisecond; on a real clock, `marginMs` before its earliest end.
 */
export function lastInside(clock: GradeClock, start: Moment, periodMs: number, marginMs: number): number {
  return clock.controlled ? start.to + periodMs - 1 : start.from + periodMs - marginMs
}

/** The first moment outside that period: its end exactly; on a real clock, `marginMs` after its latest end. */
export function firstOutside(clock: GradeClock, start: Moment, periodMs: number, marginMs: number): number {
  return clock.controlled ? start.to + periodMs : start.to + periodMs + marginMs + CLOCK_SLACK_MS
}

/** Whether a probe answered at `answeredAt` was surely decided inside the period (always, on a controlled clock). */
export function decidedInside(clock: GradeClock, start: Moment, periodMs: number, answeredAt: number): boolean {
  return clock.controlled || answeredAt < start.from + periodMs - CLOCK_SLACK_MS
}

// What these helpers tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": timeline.<key>).
const say = phrases('timeline', {
  about: 'about {ms} ms',
  inconclusiveRound: 'round {attempt} on the real clock: a probe was decided too late to tell (the machine stalled); again with a fresh key',
  tooSlow: 'in {rounds} rounds on the real clock the server never answered a probe inside the period in time: the machine is too slow to grade this',
  withUnits: '{exact} ({units})',
  unitPair: '{larger} {smaller}',
  days: '{n} d',
  hours: '{n} h',
  minutes: '{n} min',
  seconds: '{n} s',
})

/** Milliseconds from `start` to `at`, as a report says it: exact, or "about". */
export const elapsed = (start: Moment, at: number): Line => (isExact(start) ? `${at - start.to} ms` : say('about', { ms: at - start.to }))

/** A span of the grade's clock as a report says it: milliseconds, and days, hours or minutes when that long. */
export function span(ms: number): Line {
  const exact = `${ms.toLocaleString('en-US')} ms`
  if (ms < 60_000) return exact
  const units = [
    [86_400_000, 'days'],
    [3_600_000, 'hours'],
    [60_000, 'minutes'],
    [1_000, 'seconds'],
  ] as const
  let left = ms
  const parts: Line[] = []
  for (const [size, unit] of units)
    if (left >= size && parts.length < 2) {
      parts.push(say(unit, { n: Math.floor(left / size) }))
      left %= size
    }
  const [larger, smaller] = parts
  return say('withUnits', { exact, units: smaller === undefined ? larger! : say('unitPair', { larger: larger!, smaller }) })
}

const ROUNDS = 3

/**
 * Runs a round of a check whose probes must fall inside a period. On a real
 * clock a round returns 'inconclusive' when a probe was decided so late that
 * the period may really have ended (a stalled machine), and is run again on a
 * fresh key. On a controlled clock no round is ever inconclusive.
 */
export async function untilConclusive(ctx: CheckContext, round: () => Promise<'done' | 'inconclusive'>): Promise<void> {
  for (let attempt = 1; attempt <= ROUNDS; attempt++) {
    if ((await round()) === 'done') return
    ctx.note(say('inconclusiveRound', { attempt }))
  }
  fail(say('tooSlow', { rounds: ROUNDS }))
}

/**
 * The moments of a client that retries across a period's end: on a
 * controlled clock at its start, its last millisecond and its end; on a real
 * clock every `everyMs`, from now until `giveUpMs` after the later of now
 * and the start. The caller stops at
 * the first retry that gets through, and fails if none did.
 */
export function* retriesAcross(clock: GradeClock, start: Moment, periodMs: number, everyMs: number, giveUpMs: number): Generator<number> {
  if (clock.controlled) {
    yield* [start.to, lastInside(clock, start, periodMs, 0), firstOutside(clock, start, periodMs, 0)]
    return
  }
  // From the first retry on (a restart before it may have taken a loaded machine seconds).
  const first = clock.now()
  for (let at = first; at <= Math.max(first, start.to) + giveUpMs; at += everyMs) yield at
}
