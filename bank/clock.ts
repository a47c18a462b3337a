// The bank process's wall clock. A lease, a TTL and a purge are comparisons
// of timestamps, so the grader does not wait for them: it owns the clock.
//
// Off by default (`npm run serve`, production): Date is the host's, plus
// LAB_CLOCK_OFFSET_MS (stage 6 skews an instance the way a badly synced host is).
//
// LAB_CLOCK_NOW_MS set (only the grader sets it): the grader's timeline.
// - `Date.now()` and `new Date()` answer the timeline's value plus this
//   instance's offset, and stand still until the grader moves the timeline
//   (PUT /admin/clock). Standing still is what lets a check send a request
//   at the last millisecond of a lease, and another at the first one after it.
// - `setTimeout` and `setInterval` fire after their delay in real time, as
//   always, *or* as soon as the timeline passes their deadline, whichever
//   comes first. A layer's purge timer fires when the grader jumps a day
//   ahead, and nothing a library schedules (a pool's idle timeout, a shutdown
//   grace) ever waits on a timeline that stands still. An interval that a
//   jump carries past several periods fires once, as after a laptop's sleep.
// - What it cannot reach: performance.now(), process.hrtime(), the timers of
//   node:timers and node:timers/promises imported by name (the bank's own
//   core delay uses those on purpose: it is real work taking real time), and the
//   database's own clock (SQLite's unixepoch() and datetime('now'), and on
//   PostgreSQL the keywords CURRENT_TIMESTAMP and LOCALTIMESTAMP; the grader
//   moves PostgreSQL's now() itself). When a layer reads one of those, each
//   timed check is run again on the real clock, and that run decides.
//
// Why not @sinonjs/fake-timers: its timers fire only when the clock is
// ticked, so every real-time timer of a live server (pg's connection
// timeout, a keep-alive, the grace before exit) would stop with the clock;
// its shouldAdvanceTime mode brings that back by letting Date run again,
// which loses the exact boundaries. The grader needs a Date that stands
// still and timers that still run, and that is these ~150 lines.

import { promisify } from 'node:util'

type Timer = { deadline: number; fire: () => void; real: NodeJS.Timeout; queued?: boolean }

export type ClockState = { controlled: boolean; nowMs: number; offsetMs: number }

export type Clock = {
  /** The timeline's value (without this instance's offset); the host's time when not controlled. */
  state(): ClockState
  /** Moves the timeline to `nowMs` (never back) and fires the timers it passed. Only when controlled. */
  set(nowMs: number): ClockState
  /** This instance's skew from now on (a new generation's LAB_CLOCK_OFFSET_MS, generations.ts). */
  setOffset(offsetMs: number): void
}

const RealDate = Date
const real = { setTimeout, clearTimeout, setInterval, clearInterval }

/** The host's clock, plus this instance's offset once one is set. */
function hostClock(initialOffsetMs: number): Clock {
  let offsetMs = 0
  const clock: Clock = {
    state: () => ({ controlled: false, nowMs: RealDate.now(), offsetMs }),
    set: () => {
      throw new Error('the clock is the host clock: start the bank with LAB_CLOCK_NOW_MS to move it')
    },
    setOffset(ms) {
      // Date is patched only once an offset is asked for: a bank run without one keeps the real Date.
      if (ms !== 0 && globalThis.Date === RealDate) patchDate(() => RealDate.now() + offsetMs)
      offsetMs = ms
    },
  }
  clock.setOffset(initialOffsetMs)
  return clock
}

/** A process has one Date, so it has one clock: the one main.ts installed, or the host's. */
let installed: Clock = hostClock(0)
export const processClock = (): Clock => installed

export function installClock(settings: { offsetMs: number; startMs: number | undefined }): Clock {
  installed = makeClock(settings)
  return installed
}

function makeClock({ offsetMs: initialOffsetMs, startMs }: { offsetMs: number; startMs: number | undefined }): Clock {
  if (startMs === undefined) return hostClock(initialOffsetMs)
  let timeline = startMs
  let offsetMs = initialOffsetMs
  const now = () => timeline + offsetMs
  patchDate(now)
  const timers = new Map<NodeJS.Timeout, Timer>()
  patchTimers(timers, now)
  return {
    state: () => ({ controlled: true, nowMs: timeline, offsetMs }),
    setOffset(ms) {
      offsetMs = ms
    },
    set(nowMs) {
      timeline = Math.max(timeline, nowMs)
      // In deadline order, each run only if still live when its turn comes: an earlier callback may clear a later timer.
      const due = [...timers.values()].filter((t) => !t.queued && t.deadline <= now()).sort((a, b) => a.deadline - b.deadline)
      for (const timer of due) timer.fire()
      return { controlled: true, nowMs: timeline, offsetMs }
    },
  }
}

/** Replaces the global Date with one whose "now" is `now()`; dates built from a value are untouched. */
function patchDate(now: () => number) {
  function ClockDate(this: unknown, ...args: unknown[]) {
    // Date() called as a function returns a string, as the real one does.
    if (!new.target) return new RealDate(now()).toString()
    return Reflect.construct(RealDate, args.length === 0 ? [now()] : args, new.target)
  }
  ClockDate.prototype = RealDate.prototype
  ClockDate.now = now
  ClockDate.parse = RealDate.parse
  ClockDate.UTC = RealDate.UTC
  globalThis.Date = ClockDate as unknown as DateConstructor
}

/** setTimeout/setInterval that also fire when the timeline passes their deadline. */
function patchTimers(timers: Map<NodeJS.Timeout, Timer>, now: () => number) {
  const ms = (delay: unknown) => Math.max(1, Number(delay) || 0)

  const patchedSetTimeout = ((callback: (...a: unknown[]) => void, delay?: number, ...args: unknown[]) => {
    if (typeof callback !== 'function') return real.setTimeout(callback, delay) // Node's own ERR_INVALID_ARG_TYPE
    const handle: NodeJS.Timeout = real.setTimeout(() => {
      timers.delete(handle)
      callback(...args)
    }, delay)
    const track = () => {
      const timer: Timer = {
        deadline: now() + ms(delay),
        real: handle,
        fire() {
          timer.queued = true
          real.clearTimeout(handle)
          setImmediate(() => {
            if (timers.get(handle) !== timer) return // cleared (or refreshed) meanwhile
            timers.delete(handle)
            callback(...args)
          })
        },
      }
      timers.set(handle, timer)
    }
    track()
    const refresh = handle.refresh.bind(handle)
    handle.refresh = () => {
      track() // the delay starts again from now, on the timeline too
      return refresh()
    }
    return handle
  }) as typeof setTimeout
  Object.assign(patchedSetTimeout, {
    [promisify.custom]: (delay?: number, value?: unknown) => new Promise((resolve) => patchedSetTimeout(resolve, delay, value)),
  })
  globalThis.setTimeout = patchedSetTimeout

  globalThis.setInterval = ((callback: (...a: unknown[]) => void, delay?: number, ...args: unknown[]) => {
    if (typeof callback !== 'function') return real.setInterval(callback, delay) // Node's own ERR_INVALID_ARG_TYPE
    const period = ms(delay)
    const handle: NodeJS.Timeout = real.setInterval(() => {
      const timer = timers.get(handle)
      if (timer) timer.deadline = now() + period
      callback(...args)
    }, delay)
    const timer: Timer = {
      deadline: now() + period,
      real: handle,
      fire() {
        timer.deadline = now() + period
        handle.refresh() // the real period starts again from this firing
        setImmediate(() => {
          if (timers.get(handle) === timer) callback(...args)
        })
      },
    }
    timers.set(handle, timer)
    return handle
  }) as typeof setInterval

  const clear = (handle: unknown) => {
    const timer = timers.get(handle as NodeJS.Timeout)
    timers.delete(handle as NodeJS.Timeout)
    // Both real clears accept either kind of handle.
    real.clearTimeout((timer?.real ?? handle) as NodeJS.Timeout)
  }
  globalThis.clearTimeout = clear as typeof clearTimeout
  globalThis.clearInterval = clear as typeof clearInterval
}
