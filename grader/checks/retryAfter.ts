// What a 409's Retry-After may say: the time left on the lease, in whole
// seconds, at least 1 (a course rule). The claim's moment and the server's
// decision are each known only to lie between two clock readings, so the
// value a correct server sends lies in a range; rounding down or up are both
// accepted. An HTTP-date has whole seconds, and one more second of play.
import type { Reply } from '../../harness/http.ts'
import { fail } from '../check.ts'
import { courseRule } from '../courseRule.ts'
import { CLOCK_SLACK_MS } from './clock.ts'

/** A claim of a lease `leaseMs` long, made after `sentAt` and before `inCoreAt`. */
export type LeaseClaim = { leaseMs: number; sentAt: number; inCoreAt: number }

export function retryAfterRange(claim: LeaseClaim, sentAt: number, answeredAt: number) {
  const least = claim.sentAt + claim.leaseMs - answeredAt - CLOCK_SLACK_MS
  const most = claim.inCoreAt + claim.leaseMs - sentAt + CLOCK_SLACK_MS
  return { low: Math.max(1, Math.floor(least / 1000)), high: Math.max(1, Math.ceil(most / 1000)) }
}

/** Retry-After in seconds: delta-seconds, or an HTTP-date relative to the answer. */
function retryAfterSeconds(reply: Reply, answeredAt: number): number | undefined {
  const value = reply.headers['retry-after']
  if (value === undefined) return undefined
  if (/^\d+$/.test(value)) return Number(value)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.round((date - answeredAt) / 1000)
}

/** Fails unless the 409 `reply` (sent at `sentAt`, answered at `answeredAt`) says how long the lease has left. */
export function expectRetryAfterLeft(reply: Reply, claim: LeaseClaim, sentAt: number, answeredAt: number, what: string): void {
  const { low, high } = retryAfterRange(claim, sentAt, answeredAt)
  const seconds = retryAfterSeconds(reply, answeredAt)
  const play = /^\d+$/.test(reply.headers['retry-after'] ?? '') ? 0 : 1
  if (seconds === undefined || seconds < low - play || seconds > high + play)
    fail(courseRule('retryAfter', `${what}, Retry-After must say how long the lease has left`), {
      exchange: reply.exchange,
      expected: `Retry-After: ${low === high ? low : `${low} to ${high}`} (seconds)`,
      got: reply.headers['retry-after'] === undefined ? '(no Retry-After header)' : `Retry-After: ${reply.headers['retry-after']}`,
    })
}
