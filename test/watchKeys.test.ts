// npm run watch's keys on a terminal, as the state machine watch.ts drives:
// which key means what, what each does when no grade runs, what waits for
// the grade under way, and that q and Ctrl-C never wait.
import { describe, expect, it } from 'vitest'
import { commandOf, type Effect, initialState, reasonOf, step, type WatchEvent, type WatchState } from '#grader/cli/watchKeys.ts'

/** The effects of `events` from `state`, in order, and the state they leave. */
function run(state: WatchState, events: WatchEvent[]): { state: WatchState; effects: Effect[] } {
  const effects: Effect[] = []
  for (const event of events) {
    const next = step(state, event)
    state = next.state
    effects.push(...next.effects)
  }
  return { state, effects }
}

const key = (command: 'hint' | 'next' | 'all' | 'quit' | 'interrupt'): WatchEvent => ({ type: 'key', command })
const ended: WatchEvent = { type: 'ended' }

describe('the keys', () => {
  it('h, n, a and q, lower or upper case; Ctrl-C interrupts; any other key, or one with Ctrl or Alt, means nothing', () => {
    expect(commandOf({ name: 'h' })).toBe('hint')
    expect(commandOf({ name: 'n' })).toBe('next')
    expect(commandOf({ name: 'a' })).toBe('all')
    expect(commandOf({ name: 'q' })).toBe('quit')
    // readline names Shift+H "h" (with shift set).
    expect(commandOf({ name: 'h', shift: true } as never)).toBe('hint')
    expect(commandOf({ name: 'c', ctrl: true })).toBe('interrupt')
    for (const other of [
      { name: 'x' },
      { name: 'c' },
      { name: 'return' },
      { name: 'q', ctrl: true },
      { name: 'h', meta: true },
      { name: undefined },
      undefined,
    ])
      expect(commandOf(other), JSON.stringify(other)).toBeUndefined()
  })
})

describe('the state machine', () => {
  const idle = initialState(2, 6)

  it('starts with a grade of the stage, up to the first failure', () => {
    const { state, effects } = run(idle, [{ type: 'start' }])
    expect(effects).toEqual([{ type: 'grade', stage: 2, all: false, reason: reasonOf('first') }])
    expect(state.running).toBe(true)
  })

  it('idle: h shows the next hint, a grades every check once, n watches and grades the next stage', () => {
    expect(run(idle, [key('hint')]).effects).toEqual([{ type: 'hint', stage: 2 }])
    expect(run(idle, [key('all')]).effects).toEqual([{ type: 'grade', stage: 2, all: true, reason: reasonOf('all') }])
    const next = run(idle, [key('next')])
    expect(next.effects).toEqual([
      { type: 'watch', stage: 3 },
      { type: 'grade', stage: 3, all: false, reason: reasonOf('next', { number: 3 }) },
    ])
    expect(next.state.stage).toBe(3)
    // The stage after that grade ends: h is the new stage's hint.
    expect(run(next.state, [ended, key('hint')]).effects).toEqual([{ type: 'hint', stage: 3 }])
  })

  it('n on the last stage says so and grades nothing', () => {
    const last = initialState(6, 6)
    const { state, effects } = run(last, [key('next')])
    expect(effects).toEqual([{ type: 'lastStage', stage: 6 }])
    expect(state).toEqual(last)
  })

  it('during a grade, h, n and a wait for it to end, in the order pressed, and each says it waits', () => {
    const grading = run(idle, [{ type: 'start' }]).state
    const pressed = run(grading, [key('hint'), key('next'), key('hint')])
    expect(pressed.effects).toEqual([
      { type: 'queued', command: 'hint' },
      { type: 'queued', command: 'next' },
      { type: 'queued', command: 'hint' },
    ])
    // The grade ends: the hint of stage 2, then stage 3's grade; the second hint waits for that one.
    const afterFirst = run(pressed.state, [ended])
    expect(afterFirst.effects).toEqual([
      { type: 'hint', stage: 2 },
      { type: 'watch', stage: 3 },
      { type: 'grade', stage: 3, all: false, reason: reasonOf('next', { number: 3 }) },
    ])
    expect(run(afterFirst.state, [ended]).effects).toEqual([{ type: 'hint', stage: 3 }])
  })

  it('saves during a grade come to one more grade when it ends; a save while idle grades at once', () => {
    const grading = run(idle, [{ type: 'start' }]).state
    const saved = run(grading, [
      { type: 'saved', file: 'a.ts' },
      { type: 'saved', file: 'b.ts' },
    ])
    expect(saved.effects).toEqual([])
    expect(run(saved.state, [ended]).effects).toEqual([{ type: 'grade', stage: 2, all: false, reason: reasonOf('savedDuring') }])
    expect(run(idle, [{ type: 'saved', file: 'keyStore.ts' }]).effects).toEqual([
      { type: 'grade', stage: 2, all: false, reason: reasonOf('saved', { file: 'keyStore.ts' }) },
    ])
    // Ended with nothing waiting: nothing to do.
    expect(run(saved.state, [ended, ended]).effects).toHaveLength(1)
  })

  it('a grade that starts covers the saves that waited: n after a save grades the next stage once, not the old one again', () => {
    const grading = run(idle, [{ type: 'start' }]).state
    const waited = run(grading, [key('next'), { type: 'saved', file: 'a.ts' }])
    const after = run(waited.state, [ended])
    expect(after.effects.filter((e) => e.type === 'grade')).toEqual([{ type: 'grade', stage: 3, all: false, reason: reasonOf('next', { number: 3 }) }])
    expect(run(after.state, [ended]).effects).toEqual([])
  })

  it('q and Ctrl-C act at once, during a grade too', () => {
    const grading = run(idle, [{ type: 'start' }, key('hint')]).state
    expect(run(grading, [key('quit')]).effects).toEqual([{ type: 'quit' }])
    expect(run(grading, [key('interrupt')]).effects).toEqual([{ type: 'interrupt' }])
    expect(run(idle, [key('quit')]).effects).toEqual([{ type: 'quit' }])
  })
})
