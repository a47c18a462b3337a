// Stage 5's messages. purge-bounded says what the rows did: gone later than
// the course's purge interval (a purge that runs, but slower: a 15-minute
// timer) is not a table that grows without bound (no purge at all,
// never-purged). And a failure about a convention beyond draft-07 (the
// policy header, expiry counted from the first request, the purge) says so.
import { describe, expect, it } from 'vitest'
import { materialize, type Mutant } from '#grader/mutants/mutant.ts'
import { stage5Mutants } from '#grader/mutants/stage5.ts'
import { grade } from '#grader/grade.ts'
import { PURGE_EVERY_15_MIN } from './fixtures/slowPurge.ts'

/** The message of `checkId` failing on `layer`, graded alone. */
async function failureMessage(layer: Mutant, checkId = 'purge-bounded'): Promise<string> {
  const path = materialize(layer)
  const r = await grade({ stage: 5, seed: 11, source: { kind: 'dir', path }, only: [checkId] })
  expect(r.checks.map((c) => [c.id, c.status])).toEqual([[checkId, 'fail']])
  return r.checks[0]!.message
}
const purgeMessage = (layer: Mutant) => failureMessage(layer)
const mutant = (id: string) => stage5Mutants.find((m) => m.id === id)!

describe('purge-bounded tells a slow purge from none', () => {
  it('a purge every 15 minutes: not purged within the course interval (a course rule), gone later; never "without bound"', async () => {
    const message = await purgeMessage(PURGE_EVERY_15_MIN)
    expect(message).toMatch(/expired 400 ms ago; a request came after that, and 400 ms more passed \(the course's purge interval, min\(TTL, 60 s\)\)/)
    expect(message).toContain("the table is not purged within the course's interval")
    expect(message).toContain('still there 60,000 ms (1 min) after they expired, and gone 3,600,000 ms (1 h) after')
    expect(message).toMatch(/\(course rule, beyond draft-07 §2\.3\)$/)
    expect(message).not.toContain('without bound')
  }, 120_000)

  it('no purge at all (never-purged): still there a day later, so the table grows without bound', async () => {
    const message = await purgeMessage(mutant('never-purged'))
    expect(message).toContain('still there 60,000 ms (1 min), 3,600,000 ms (1 h), 86,400,000 ms (1 d) after they expired')
    expect(message).toContain('the key table grows without bound')
    expect(message).toMatch(/\(course rule, beyond draft-07 §2\.3\)$/)
  }, 120_000)
})

describe('failures about a course convention are labelled as one', () => {
  it("policy-published: the Idempotency-Key-Policy header is the course's (beyond draft-07 §2.3)", async () => {
    expect(await failureMessage(mutant('policy-hard-coded'), 'policy-published')).toMatch(/\(course rule, beyond draft-07 §2\.3\)$/)
  }, 120_000)

  it("ttl-from-first-request: expiry counted from the first request is the course's (beyond draft-07 §2.3)", async () => {
    const message = await failureMessage(mutant('ttl-from-completion'), 'ttl-from-first-request')
    expect(message).toContain('its TTL runs from the first request, not from the moment it completed')
    expect(message).toMatch(/\(course rule, beyond draft-07 §2\.3\)$/)
  }, 120_000)
})
