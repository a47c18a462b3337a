// What the bench sends. Both workloads post the same kind of body a real
// client would (accounts, amount, memo, a small metadata object), so the
// fingerprint hashes a realistic payload, not an empty one.
import type { Accept, LoadTarget, Workload } from './load.ts'

export type Mode = 'fresh' | 'replay'
export const MODES: Mode[] = ['fresh', 'replay']

/** How many distinct completed keys the replay workload cycles through. */
export const REPLAY_KEYS = 256

function body(target: LoadTarget, n: number): string {
  return JSON.stringify({ from: target.from, to: target.to, amount: 1, memo: 'bench', metadata: { n } })
}

/** A new key and a new body every time: every request is a first request and executes. */
export function freshWorkload(target: LoadTarget): Workload {
  let n = 0
  return {
    next() {
      n++
      return { key: `fresh-${n}`, body: body(target, n) }
    },
  }
}

/**
 * The same REPLAY_KEYS keys and bodies, over and over. Sent once through
 * (the prefill) they execute; every later pass is an identical retry of a
 * completed request: stage 0 executes it again, stages 1-3 answer 200
 * already-processed, stages 4-5 replay the stored 201.
 */
export function replayWorkload(target: LoadTarget): Workload {
  const requests = Array.from({ length: REPLAY_KEYS }, (_, i) => ({ key: `replay-${i}`, body: body(target, -i) }))
  let i = 0
  return { next: () => requests[i++ % REPLAY_KEYS]! }
}

/** A fresh request must execute: 201. A retry may execute again (stage 0), be refused as done (200) or replayed (201). */
export const ACCEPT: Record<Mode, Accept> = {
  fresh: (status) => status === 201,
  replay: (status) => status === 200 || status === 201,
}
