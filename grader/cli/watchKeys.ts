// What npm run watch does next, as a state machine with no I/O: each event
// (the first grade, a file saved, a key pressed on a terminal, a grade ended)
// gives the new state and the effects for watch.ts to carry out. One grade
// runs at a time: a save or a key (h, n, a) during a grade waits for it to
// end, in the order they came; q and Ctrl-C act at once.
import type { Key } from 'node:readline'
import { type Line, phrases } from '#harness/i18n/phrase.ts'

/** Why a grade runs, heading it when the output is not a terminal (i18n/<lang>.json, "messages": watchReason.<key>). */
export const reasonOf = phrases('watchReason', {
  first: 'first grade',
  saved: '{file} changed',
  aFile: 'a file',
  all: 'every check (a)',
  next: 'stage {number} (n)',
  savedDuring: 'changed during the last grade',
})

/** What a key asks for: h the next hint, n the next stage, a every check once, q quit; Ctrl-C interrupts as it would without raw mode. */
export type KeyCommand = 'hint' | 'next' | 'all' | 'quit' | 'interrupt'

/** The commands that wait for a grade under way. */
type Queueable = Exclude<KeyCommand, 'quit' | 'interrupt'>

const LETTERS: Record<string, KeyCommand> = { h: 'hint', n: 'next', a: 'all', q: 'quit' }

/** The command of a keypress (readline's emitKeypressEvents), or none for any other key. */
export function commandOf(key: Pick<Key, 'name' | 'ctrl' | 'meta'> | undefined): KeyCommand | undefined {
  if (!key?.name) return undefined
  if (key.ctrl) return key.name === 'c' ? 'interrupt' : undefined
  return key.meta ? undefined : LETTERS[key.name]
}

export type WatchEvent = { type: 'start' } | { type: 'saved'; file: string | null } | { type: 'key'; command: KeyCommand } | { type: 'ended' }

export type Effect =
  /** Grade `stage`; `all`: every check, not up to the first failure. `reason` heads the run when the output is not a terminal. */
  | { type: 'grade'; stage: number; all: boolean; reason: Line }
  | { type: 'hint'; stage: number }
  /** Watch `stage`'s folder instead of the one watched. */
  | { type: 'watch'; stage: number }
  /** n on the last stage: nothing after it. */
  | { type: 'lastStage'; stage: number }
  /** A key that waits for the grade under way. */
  | { type: 'queued'; command: Queueable }
  | { type: 'quit' }
  | { type: 'interrupt' }

type Waiting = { type: 'saved' } | { type: 'key'; command: Queueable }

export type WatchState = {
  /** The stage watched, and the course's last. */
  stage: number
  last: number
  running: boolean
  /** What came during the grade under way, in order; saves count once. */
  waiting: Waiting[]
}

export const initialState = (stage: number, last: number): WatchState => ({ stage, last, running: false, waiting: [] })

type Step = { state: WatchState; effects: Effect[] }

export function step(state: WatchState, event: WatchEvent): Step {
  if (event.type === 'ended') return drain({ ...state, running: false })
  if (event.type === 'key') {
    const { command } = event
    if (command === 'quit' || command === 'interrupt') return { state, effects: [{ type: command }] }
    if (state.running) return { state: { ...state, waiting: [...state.waiting, { type: 'key', command }] }, effects: [{ type: 'queued', command }] }
    return keyWhenIdle(state, command)
  }
  if (state.running) {
    const saved = event.type === 'saved' && !state.waiting.some((w) => w.type === 'saved')
    return { state: saved ? { ...state, waiting: [...state.waiting, { type: 'saved' }] } : state, effects: [] }
  }
  return event.type === 'start'
    ? grade(state, state.stage, false, reasonOf('first'))
    : grade(state, state.stage, false, reasonOf('saved', { file: event.file ?? reasonOf('aFile') }))
}

function grade(state: WatchState, stage: number, all: boolean, reason: Line, before: Effect[] = []): Step {
  // A grade about to start covers every save that waited for the last one.
  const waiting = state.waiting.filter((w) => w.type !== 'saved')
  return { state: { ...state, stage, running: true, waiting }, effects: [...before, { type: 'grade', stage, all, reason }] }
}

function keyWhenIdle(state: WatchState, command: Queueable): Step {
  if (command === 'hint') return { state, effects: [{ type: 'hint', stage: state.stage }] }
  if (command === 'all') return grade(state, state.stage, true, reasonOf('all'))
  if (state.stage >= state.last) return { state, effects: [{ type: 'lastStage', stage: state.stage }] }
  const next = state.stage + 1
  return grade(state, next, false, reasonOf('next', { number: next }), [{ type: 'watch', stage: next }])
}

/** After a grade: what waited for it, in order, until one starts the next grade (the rest wait for that one). */
function drain(state: WatchState): Step {
  const effects: Effect[] = []
  let current = state
  while (!current.running && current.waiting.length > 0) {
    const [first, ...rest] = current.waiting
    current = { ...current, waiting: rest }
    const done = first!.type === 'saved' ? grade(current, current.stage, false, reasonOf('savedDuring')) : keyWhenIdle(current, first!.command)
    current = done.state
    effects.push(...done.effects)
  }
  return { state: current, effects }
}
