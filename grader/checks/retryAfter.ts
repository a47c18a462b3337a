// What a 409's Retry-After may say: the time left on the lease, in whole
// seconds, at least 1 (a course rule). Rounding down or up are both accepted.
// On a controlled clock the claim and the duplicate each happened at one
// exact moment, so the time left is exact and so is the range; on a real
// clock each is known only between two readings, and the range widens by them.
// An HTTP-date has whole seconds, and one more second of play.
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import type { Reply } from '#harness/http.ts'
import { fail } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import { CLOCK_SLACK_MS, isExact, type Moment } from './timeline.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": retryAfter.<key>).
const say = phrases('retryAfter', {
  mustSay: '{what}, Retry-After must say how long the lease has left',
  expectedRange: 'Retry-After: {range} (seconds)',
  noHeader: '(no Retry-After header)',
})

/** A claim of a lease `leaseMs` long, made at `at`. */
export type LeaseClaim = { leaseMs: number; at: Moment }

export function retryAfterRange(claim: LeaseClaim, duplicate: Moment) {
  const slack = isExact(claim.at) && isExact(duplicate) ? 0 : CLOCK_SLACK_MS
  const least = claim.at.from + claim.leaseMs - duplicate.to - slack
  const most = claim.at.to + claim.leaseMs - duplicate.from + slack
  return { low: Math.max(1, Math.floor(least / 1000)), high: Math.max(1, Math.ceil(most / 1000)) }
}

/** Retry-After in seconds: delta-seconds, or an HTTP-date relative to the moment of the answer. */
function retryAfterSeconds(reply: Reply, answeredAt: number): number | undefined {
  const value = reply.headers['retry-after']
  if (value === undefined) return undefined
  if (/^\d+$/.test(value)) return Number(value)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.round((date - answeredAt) / 1000)
}

/** Why the 409 `reply` to a duplicate sent at `duplicate` does not say how long the lease has left, as fail()'s arguments; undefined when it does. */
export function retryAfterProblem(reply: Reply, claim: LeaseClaim, duplicate: Moment, what: Line): Parameters<typeof fail> | undefined {
  const { low, high } = retryAfterRange(claim, duplicate)
  const seconds = retryAfterSeconds(reply, duplicate.to)
  const play = /^\d+$/.test(reply.headers['retry-after'] ?? '') ? 0 : 1
  if (seconds !== undefined && seconds >= low - play && seconds <= high + play) return undefined
  return [
    courseRule('retryAfter', say('mustSay', { what })),
    {
      exchange: reply.exchange,
      expected: say('expectedRange', { range: low === high ? low : `${low} to ${high}` }),
      got: reply.headers['retry-after'] === undefined ? say('noHeader') : `Retry-After: ${reply.headers['retry-after']}`,
    },
  ]
}

/** Fails unless the 409 `reply` to a duplicate sent at `duplicate` says how long the lease has left. */
export function expectRetryAfterLeft(reply: Reply, claim: LeaseClaim, duplicate: Moment, what: Line): void {
  const problem = retryAfterProblem(reply, claim, duplicate, what)
  if (problem) fail(...problem)
}
