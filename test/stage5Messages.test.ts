// Stage 5's messages. purge-bounded says what the rows did: gone later than
// the course's purge interval (a purge that runs, but slower: a 15-minute
// timer) is not a table that grows without bound (no purge at all,
// never-purged). And a failure about a convention beyond draft-07 (the
// policy header, expiry counted from the first request, the purge) says so.
// in-flight-across-ttl names the lease it set, never one the layer kept.
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
  return String(r.checks[0]!.message)
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

// in-flight-across-ttl configures the lease (LAB_LEASE_MS) but never sees a
// layer keep it: it says the setting, never "its lease", which a layer with no
// lease at all does not have. A 409 it did see is said as what it saw.
describe('in-flight-across-ttl says the lease it set, not one the layer kept', () => {
  it('a claim forgotten at its TTL (expiry-ignores-lease): the setting, and no "its 20000 ms lease"', async () => {
    const message = await failureMessage(mutant('expiry-ignores-lease'), 'in-flight-across-ttl')
    expect(message).toMatch(
      /^1000 ms after the claim, past the key's TTL \(LAB_KEY_TTL_MS=1000\) with the first request still held in the core, a duplicate executed a second time: /,
    )
    expect(message).toContain('the grader started this server with LAB_LEASE_MS=20000')
    expect(message).not.toMatch(/its 20000 ms lease|\(one .* had got 409\)/)
  }, 120_000)

  it('a claim kept past its TTL for half its lease: the 409 seen before is said too', async () => {
    const halfLease: Mutant = {
      id: 'expiry-at-half-lease',
      stage: 5,
      title: 'an expired claim in progress is forgotten halfway through its lease',
      mustFail: 'in-flight-across-ttl',
      edits: [
        {
          file: 'keyStore.ts',
          find: "row.status === 'completed' || row.leaseUntil! <= now",
          replace: "row.status === 'completed' || row.leaseUntil! - leaseMs / 2 <= now",
        },
        // The purge that forgets it must delete it too, or claim() goes round for ever.
        { file: 'keyStore.ts', find: 'OR lease_until <= ?)', replace: `OR lease_until - \${leaseMs / 2} <= ?)` },
      ],
    }
    const message = await failureMessage(halfLease, 'in-flight-across-ttl')
    expect(message).toMatch(/^19999 ms after the claim, .* a duplicate executed a second time \(one 1000 ms after the claim had got 409\): /)
    expect(message).not.toContain('its 20000 ms lease')
  }, 120_000)
})
