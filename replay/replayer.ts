// Replays the day in time order against a server behind the fault proxy.
//
// Idle time is compressed: a line goes out as soon as the lines before it have
// gone out, up to `concurrency` requests at a time. What the outcome depends on
// is kept:
// - lines with the same time are sent at the same instant, each on its own
//   connection (double taps);
// - lines with the same key string go out in log order, each after the one
//   before it has finished (retries, amendments, two clients sharing a key);
// - a retry waits its backoff, the log's delay divided by RETRY_TIME_SCALE,
//   after the attempt it retries ended; and it is sent only if the client still
//   has no final answer (a 409, a 5xx or a broken connection is not final);
// - at the restart, everything else has finished, the planned requests are
//   provably inside the server (held in the core simulator), and then the
//   server is SIGKILLed and started again on the same database (with several
//   instances, the one holding the most of them; the others finish theirs).
import { setTimeout as sleep } from 'node:timers/promises'
import type { Customer } from '#harness/bankClient.ts'
import type { Exchange, RequestSpec } from '#harness/http.ts'
import { faultRow } from '../logs/faults.ts'
import { parseTime, type AttemptLine } from '../logs/format.ts'
import { FAULT_HEADER } from './proxy.ts'
import type { Sender } from './sender.ts'
import { realBody, type World } from './world.ts'

/** One second of the day's retry backoff lasts 1/RETRY_TIME_SCALE s in the replay. */
export const RETRY_TIME_SCALE = 20

export type AttemptRecord = {
  line: AttemptLine
  /** False when the client already had its final answer and the retry was not needed. */
  sent: boolean
  /** Order in which attempts went out; attempts of one burst share `burst`. */
  seq: number
  burst: number
  exchange?: Exchange
}

/** What the replayer needs from whoever runs the server (one, or several instances behind the proxy). */
export type ServerControl = {
  /** Hold every transfer inside the core simulator, on every instance. */
  hold(): Promise<void>
  /** How many requests are held in the cores right now, all instances together. */
  inflight(): Promise<number>
  /**
   * SIGKILL the instance holding the requests (of several, the one holding the
   * most), start it again on the same database, point the proxy at it; no core
   * holds anything afterwards.
   */
  killAndRestart(): Promise<void>
}

export type ReplayProgress = { done: number; total: number; sent: number }

/** A first-in, first-out semaphore: the dispatch loop and the waiting retries share the slots fairly. */
class Gate {
  private free: number
  private queue: Array<{ n: number; go: () => void }> = []
  constructor(private readonly size: number) {
    this.free = size
  }
  /** Takes n slots (at most all of them, so a large burst cannot wait forever); give back as many. */
  acquire(n = 1): Promise<number> {
    const slots = Math.min(n, this.size)
    return new Promise((go) => {
      this.queue.push({ n: slots, go: () => go(slots) })
      this.pump()
    })
  }
  release(n = 1) {
    this.free += n
    this.pump()
  }
  private pump() {
    while (this.queue.length && this.queue[0]!.n <= this.free) {
      const next = this.queue.shift()!
      this.free -= next.n
      next.go()
    }
  }
}

const isFinal = (e: Exchange | undefined) => !!e?.response && e.response.status !== 409 && e.response.status < 500

export async function replay(
  lines: AttemptLine[],
  world: World,
  sender: Sender,
  control: ServerControl,
  options: { concurrency?: number; onProgress?: (p: ReplayProgress) => void } = {},
): Promise<AttemptRecord[]> {
  const gate = new Gate(options.concurrency ?? 16)
  const records: AttemptRecord[] = lines.map((line) => ({ line, sent: false, seq: -1, burst: -1 }))
  const pending = new Set<Promise<void>>()
  const keyTail = new Map<string, Promise<void>>()
  const intents = new Map<string, { answered: boolean; lastEnd: number; lastMs: number }>()
  let seq = 0
  let bursts = 0
  const progress = { done: 0, total: lines.length, sent: 0 }

  const track = (p: Promise<void>) => {
    pending.add(p)
    void p.finally(() => pending.delete(p))
    return p
  }
  const drain = async () => {
    while (pending.size) await Promise.all(pending)
  }
  const finished = (n: number) => {
    progress.done += n
    options.onProgress?.(progress)
  }

  const spec = (line: AttemptLine): RequestSpec => ({
    method: line.method,
    path: line.path,
    body: realBody(world, line.body),
    headers: {
      Authorization: `Bearer ${(world.customers.get(line.client) as Customer).apiKey}`,
      'Idempotency-Key': line.key,
      ...(faultRow(line.fault).play === 'proxy' ? { [FAULT_HEADER]: line.fault } : {}),
    },
  })

  /** Sends a group of lines at one instant (a burst when there are several) and records what came back. */
  async function send(indexes: number[]) {
    const burst = bursts++
    for (const i of indexes) Object.assign(records[i]!, { sent: true, seq: seq++, burst })
    progress.sent += indexes.length
    const specs = indexes.map((i) => spec(lines[i]!))
    const exchanges = specs.length === 1 ? [await sender.send(specs[0]!)] : await sender.burst(specs)
    const now = performance.now()
    indexes.forEach((i, k) => {
      const record = records[i]!
      record.exchange = exchanges[k]
      const state = intents.get(record.line.intent) ?? { answered: false, lastEnd: 0, lastMs: 0 }
      state.answered ||= isFinal(record.exchange)
      state.lastEnd = now
      state.lastMs = parseTime(record.line.t)
      intents.set(record.line.intent, state)
    })
    finished(indexes.length)
  }

  /** Chains the lines behind the earlier lines with the same key; returns what they must wait for. */
  const chain = (indexes: number[], done: Promise<void>) => {
    const before = indexes.map((i) => keyTail.get(lines[i]!.key))
    for (const i of indexes) keyTail.set(lines[i]!.key, done)
    return Promise.all(before)
  }

  /** A retry or an amendment: after its backoff, and (for a retry) only if still needed. */
  function followUp(i: number) {
    const line = lines[i]!
    let release!: () => void
    const done = new Promise<void>((r) => (release = r))
    const after = chain([i], done)
    track(
      (async () => {
        await after
        const state = intents.get(line.intent)
        if (line.cause === 'retry' && state?.answered) return finished(1)
        if (state) {
          const wait = (parseTime(line.t) - state.lastMs) / RETRY_TIME_SCALE - (performance.now() - state.lastEnd)
          if (wait > 0) await sleep(wait)
        }
        await gate.acquire()
        try {
          await send([i])
        } finally {
          gate.release()
        }
      })().finally(release),
    )
  }

  async function restart(indexes: number[]) {
    await drain()
    await control.hold()
    const inside = indexes.map((i) => {
      const done = send([i])
      void chain([i], done)
      return track(done)
    })
    let settled = 0
    for (const p of inside) void p.then(() => settled++)
    const deadline = performance.now() + 5_000
    // Provably in flight: each planned request is held in the core (or already answered, if the stage never got that far).
    while ((await control.inflight()) + settled < indexes.length && performance.now() < deadline) await sleep(10)
    await control.killAndRestart()
  }

  /** Line k is inside the server when it is killed (logs/faults.ts: played by a restart). */
  const killed = (k: number) => faultRow(lines[k]!.fault).play === 'restart'
  let i = 0
  while (i < lines.length) {
    const t = lines[i]!.t
    let end = i
    while (end < lines.length && lines[end]!.t === t) end++
    if (killed(i)) {
      // The whole group of requests inside the server at the kill.
      while (end < lines.length && killed(end)) end++
      await restart(Array.from({ length: end - i }, (_, k) => i + k))
      i = end
      continue
    }
    const firsts: number[] = []
    for (let k = i; k < end; k++) {
      if (lines[k]!.cause === 'retry' || lines[k]!.cause === 'amendment') followUp(k)
      else firsts.push(k)
    }
    if (firsts.length) {
      const slots = await gate.acquire(firsts.length) // back-pressure: the loop never runs far ahead of the server
      let release!: () => void
      const done = new Promise<void>((r) => (release = r))
      const after = chain(firsts, done)
      track(
        (async () => {
          try {
            await after
            await send(firsts)
          } finally {
            gate.release(slots)
          }
        })().finally(release),
      )
    }
    i = end
  }
  await drain()
  return records
}
