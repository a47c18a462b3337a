// A running bank's generations. Between two checks the grader gives an
// instance other settings, or a fresh database, through PUT /admin/instance
// (instanceAdmin.ts) instead of starting another process, which costs far
// more than a check. Each configuration is a generation: its own config,
// store, layer (createLayer is called again), core and app. The new one takes
// every request that arrives from then on; the old one ends as its process
// would have:
//   - its core lets go of what it holds, disarmed first (no crash after a commit);
//   - its requests finish (a moment at most: nothing holds them any more);
//   - every timer its code set and still has pending is cleared, so a
//     layer's purge timer never runs with the old settings on the database
//     the new generation uses;
//   - its store is closed, when the database changed (a store that keeps
//     the same database is handed on).
// What a generation does not renew is the process: a layer's module-level
// variables outlive it (CONTRACT.md: keep a layer's state in what createLayer returns).
import { AsyncLocalStorage } from 'node:async_hooks'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import type { Config } from './config.ts'
import type { CoreBanking } from './core.ts'
import type { StoreKind } from './layer.ts'
import type { Store } from './store.ts'

/** What a generation is made of: opened by run.ts for a config. */
export type GenerationParts = { config: Config; store: Store<StoreKind>; core: CoreBanking; app: RequestListener }

type Generation = Partial<GenerationParts> & {
  number: number
  /** Requests it is still handling. */
  inflight: number
  /** Its timers still pending (setTimeout and setInterval called by its code). */
  timers: Set<NodeJS.Timeout>
}

/** How long an ending generation's requests get to finish: as long as a shutdown gives them (run.ts). */
const DRAIN_MS = 2_000

/** The generation whose code is running: requests, createLayer and the timers they set carry it. */
const running = new AsyncLocalStorage<Generation>()

export type Generations = {
  /** Every request goes to the generation current when it arrives. */
  readonly handler: RequestListener
  readonly current: GenerationParts & { number: number }
  /**
   * Opens a generation for `config` (a new store only when `sameDatabase` is
   * false) and makes it current; ends the one before. `ownRequests`: requests
   * of the old generation that are waiting for this one (the admin request
   * asking for it), not waited for.
   */
  renew(config: Config, sameDatabase: boolean, ownRequests?: number): Promise<void>
}

/**
 * The first generation, opened by `open`, which every later one is opened by
 * too (with the store to keep, if any). Installs the timer tracking once.
 */
export async function startGenerations(config: Config, open: (config: Config, keep?: Store<StoreKind>) => Promise<GenerationParts>): Promise<Generations> {
  trackTimers()
  let count = 0
  const make = async (config: Config, keep?: Store<StoreKind>): Promise<Generation & GenerationParts> => {
    const generation: Generation = { number: ++count, inflight: 0, timers: new Set() }
    // createLayer runs inside it: a timer it starts belongs to this generation.
    const parts = await running.run(generation, () => open(config, keep))
    return Object.assign(generation, parts)
  }
  let current = await make(config)

  async function end(old: Generation & GenerationParts, closeStore: boolean, ownRequests: number) {
    old.core.update({ crashAfterCommit: false, hold: false, holdNext: 0, failNext: 0 })
    const deadline = performance.now() + DRAIN_MS
    while (old.inflight > ownRequests && performance.now() < deadline) await sleep(5)
    for (const timer of old.timers) clearTimeout(timer)
    old.timers.clear()
    // A request still running past the drain keeps its store: closing it under the request would fail it for our reasons.
    if (closeStore && old.inflight <= ownRequests) old.store.close()
  }

  return {
    handler(req: IncomingMessage, res: ServerResponse) {
      const generation = current
      generation.inflight++
      res.once('close', () => generation.inflight--)
      running.run(generation, () => generation.app(req, res))
    },
    get current() {
      return current
    },
    async renew(config, sameDatabase, ownRequests = 0) {
      const old = current
      current = await make(config, sameDatabase ? old.store : undefined)
      await end(old, !sameDatabase, ownRequests)
    },
  }
}

let tracking = false

/**
 * setTimeout and setInterval (as installed when this runs: clock.ts's, when
 * the grader owns the clock) that remember which generation set them, so
 * that one ending clears them. A timer set outside any generation (Node's
 * HTTP server, the process) is left alone.
 */
function trackTimers() {
  if (tracking) return
  tracking = true
  const base = { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval }
  const tracked = (set: typeof setTimeout | typeof setInterval, once: boolean) =>
    ((callback: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) => {
      const generation = running.getStore()
      if (!generation || typeof callback !== 'function') return (set as typeof setTimeout)(callback, delay, ...args)
      const timer: NodeJS.Timeout = (set as typeof setTimeout)(
        (...a: unknown[]) => {
          if (once) generation.timers.delete(timer)
          callback(...a)
        },
        delay,
        ...args,
      )
      generation.timers.add(timer)
      return timer
    }) as typeof setTimeout
  const setTimeoutTracked = tracked(base.setTimeout, true)
  // util.promisify(setTimeout) keeps working (Node's own has this).
  Object.assign(setTimeoutTracked, {
    [promisify.custom]: (delay?: number, value?: unknown) => new Promise((resolve) => setTimeoutTracked(resolve, delay, value)),
  })
  globalThis.setTimeout = setTimeoutTracked
  globalThis.setInterval = tracked(base.setInterval, false) as unknown as typeof setInterval
  const clear = globalThis.clearTimeout
  const untrack = (timer: unknown) => {
    running.getStore()?.timers.delete(timer as NodeJS.Timeout)
    clear(timer as NodeJS.Timeout)
  }
  globalThis.clearTimeout = untrack as typeof clearTimeout
  globalThis.clearInterval = untrack as typeof clearInterval
}
