// bank/clock.ts: the bank's clock, which the grader owns. installClock()
// replaces the global Date and timers, so every scenario runs in a process of
// its own (test/fixtures/clockProbe.ts) and this worker's globals stay the
// host's. Each scenario starts its timeline at the same fixed moment, and
// nothing here measures wall time: a timer expected to fire in real time only
// has to fire before the probe's generous time limit.
import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'

const run = promisify(execFile)
const PROBE = resolve(repoRoot, 'test', 'fixtures', 'clockProbe.ts')
const MINUTE = 60_000
/** Where every probe's timeline starts (START in clockProbe.ts; not imported: importing the probe would run it). */
const START = 1_700_000_000_000

/** Runs one scenario of clockProbe.ts in a fresh Node process and returns what it printed. */
async function probe<T = Record<string, unknown>>(scenario: string): Promise<T> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', PROBE, scenario], { cwd: repoRoot, timeout: 100_000, maxBuffer: 1024 * 1024 })
  return JSON.parse(stdout) as T
}

const controlledAt = (nowMs: number, offsetMs = 0) => ({ controlled: true, nowMs, offsetMs })

describe('installClock with a timeline (the grader set LAB_CLOCK_NOW_MS)', () => {
  it('Date.now(), new Date() and Date() stand still at the timeline moment', async () => {
    const r = await probe<{ expectedString: string }>('standStill')
    expect(r).toEqual({
      first: { now: START, newDate: START },
      // 50 ms of real time later.
      later: { now: START, newDate: START },
      // Called as a function it returns a string, arguments or not, as the host's Date does.
      calledAsFunction: r.expectedString,
      calledAsFunctionWithArgument: r.expectedString,
      expectedString: r.expectedString,
      state: controlledAt(START),
      processClockIsIt: true,
    })
  })

  it("Date with arguments, Date.parse and Date.UTC are the host's, and its dates are still Dates", async () => {
    const r = await probe<{ patched: unknown; host: unknown }>('constructors')
    expect(r.patched, 'a date built from a value is the value, as with the host Date').toEqual(r.host)
    expect(r).toMatchObject({
      dateReplaced: true,
      parseIsHosts: true,
      utcIsHosts: true,
      instanceOfDate: true,
      instanceOfHostDate: true,
      argumentInstanceOfDate: true,
      hostInstanceOfDate: true,
      toStringTag: '[object Date]',
      iso: new Date(START).toISOString(),
      expectedIso: new Date(START).toISOString(),
    })
  })

  it('set() moves the timeline forward and never back', async () => {
    expect(await probe('forwardOnly')).toEqual({
      forward: controlledAt(START + 1_000),
      afterForward: START + 1_000,
      back: controlledAt(START + 1_000),
      afterBack: START + 1_000,
      same: controlledAt(START + 1_000),
      state: controlledAt(START + 1_000),
    })
  })

  it("adds the instance's offset to what Date reads, not to the timeline; its timers count from the instance's own now", async () => {
    expect(await probe('offset')).toEqual({
      start: { now: START + 5_000, newDate: START + 5_000, state: controlledAt(START, 5_000) },
      beforeDeadline: 0,
      moved: controlledAt(START + MINUTE, 5_000),
      nowAfterMove: START + MINUTE + 5_000,
      fired: [START + MINUTE + 5_000],
    })
    expect(await probe('negativeOffset')).toEqual({ now: START - 2_000, newDate: START - 2_000, state: controlledAt(START, -2_000) })
  })

  it('a setTimeout(…, 60_000) fires right after set(now + 60 s) with its arguments, not after set(now + 60 s - 1 ms), and only once', async () => {
    expect(await probe('timeoutBoundary')).toEqual({
      atLastMillisecond: 0,
      rightAfter: [{ at: START + MINUTE, args: ['a', 1] }],
      afterAnotherJump: 1,
    })
  })

  it('a setInterval(…, 1000) fires once when one jump spans ten periods; its next period counts from that firing', { timeout: 330_000 }, async () => {
    // Its real period could also fire it, were the probe stalled for a second in the
    // middle (a loaded machine): such a run says so, and is run again.
    let r = await probe<{ realElapsedMs: number }>('intervalJump')
    for (let attempt = 1; attempt < 3 && r.realElapsedMs >= 900; attempt++) r = await probe<{ realElapsedMs: number }>('intervalJump')
    expect(r).toEqual({
      realElapsedMs: r.realElapsedMs,
      afterJump: [START + 10_500],
      beforeNextPeriod: 1,
      atNextPeriod: [START + 10_500, START + 11_500],
    })
  })

  it("clearTimeout and clearInterval cancel both the real firing and the timeline's", async () => {
    // Cleared at once (10 ms and 60 s, timeouts and intervals, each clear on
    // either kind, a host timer made before install): none fires in real time
    // nor on a 100-minute jump. The interval cleared after one firing fires once.
    expect(await probe('clearing')).toEqual({ fired: ['interval fired once'] })
  })

  it('timers still fire in real time while the clock stands still, and a jump does not fire them again', async () => {
    expect(await probe('realTime')).toEqual({
      timeoutSawNow: START,
      ticks: 3,
      count: 1,
      nowAfter: START + 60 * MINUTE,
      state: controlledAt(START + 60 * MINUTE),
    })
  })
})

describe('installClock without a timeline (npm run serve, production)', () => {
  it("offset 0 leaves Date and the timers the host's, and set() refuses", async () => {
    const r = await probe<{ stateMinusHost: number }>('hostMode')
    expect(r).toEqual({
      untouched: { Date: true, setTimeout: true, clearTimeout: true, setInterval: true, clearInterval: true },
      controlled: false,
      offsetMs: 0,
      stateMinusHost: r.stateMinusHost,
      setError: expect.stringMatching(/host clock.*LAB_CLOCK_NOW_MS/),
      processClockIsIt: true,
    })
    // state() reads the host clock; the host's Date.now() was read just after it.
    expect(r.stateMinusHost).toBeLessThanOrEqual(0)
    expect(r.stateMinusHost).toBeGreaterThan(-MINUTE)
  })

  it("an offset puts Date that far ahead of the host's; the timers stay the host's", async () => {
    const r = await probe<{ nowMinusHost: number; newDateMinusHost: number }>('hostOffset')
    expect(r).toMatchObject({ timersUntouched: true, state: { controlled: false, offsetMs: 3_600_000 } })
    for (const ahead of [r.nowMinusHost, r.newDateMinusHost]) {
      expect(ahead).toBeLessThanOrEqual(3_600_000)
      expect(ahead).toBeGreaterThan(3_600_000 - MINUTE)
    }
  })
})

// The behaviour Node's own timers and Date have, which a first version of
// clock.ts got wrong. A copy of clock.ts can be probed with
// CLOCK_PROBE_MODULE=/path/to/copy.ts.
describe("clock.ts keeps Node's timer and Date semantics", () => {
  it('a timer cleared after the jump that made it due, before its callback ran, does not run', async () => {
    // clock.ts: set() queues the callback in a setImmediate and forgets the timer, so the clear comes too late.
    expect(await probe('clearedAfterDue')).toEqual({ fired: false })
  })

  it('timers one jump passes run in deadline order, so an earlier callback can clear a later timer', async () => {
    // clock.ts: they run in the order they were made (Map order), and all of them, cleared or not.
    expect(await probe('deadlineOrder')).toEqual({ order: ['3 s'] })
  })

  it('timeout.refresh() restarts the delay on the timeline too, as it does in real time', async () => {
    // clock.ts: refresh() re-arms the real timer only; the timeline still fires it at its first deadline.
    expect(await probe('refresh')).toEqual({ atOldDeadline: false, atNewDeadline: true })
  })

  it('new X() of a class X extends Date is an X', async () => {
    // clock.ts: ClockDate returns a plain Date whatever new.target is.
    expect(await probe('subclass')).toEqual({ nowIsStamp: true, fromValueIsStamp: true, hasMethod: true, nowMs: START })
  })

  it('util.promisify(setTimeout) still sleeps', async () => {
    // clock.ts: the patched setTimeout has no util.promisify.custom, so promisify passes its
    // callback as an argument and the timer calls the number 10: "callback is not a function",
    // an uncaught exception that would end a bank.
    expect(await probe('promisified')).toEqual({ value: 'slept', uncaught: [] })
  })
})
