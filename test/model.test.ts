// The contract's model (grader/model/contract.ts) on its own: each promise
// switched on by the stage that makes it, the boundaries exact, and the
// answers it judges (runHistory.ts deviation) told apart as the contract
// tells them apart. No server runs here.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Reply } from '#harness/http.ts'
import { claim, complete, decide, newModel, release, type ModelState, type Request } from '#grader/model/contract.ts'
import { deviation } from '#grader/model/runHistory.ts'
import { historyArbitrary, motifKinds, tourOf, type Alphabet, type MotifKind, type Op, type SendOp } from '#grader/model/history.ts'

const LEASE = 30_000
const TTL = 86_400_000
const T0 = 1_700_000_000_000

function bank(stage: number): ModelState {
  return newModel(stage, { leaseMs: LEASE, ttlMs: TTL }, T0, [
    { id: 'a0', client: 0, balance: 10_000 },
    { id: 'a1', client: 0, balance: 10_000 },
    { id: 'b0', client: 1, balance: 10_000 },
  ])
}

let next = 1
function transfer(over: Partial<Request> & { amount?: number } = {}): Request {
  const amount = over.amount ?? 1_000
  return {
    id: next++,
    client: 0,
    route: 'POST /transfers',
    key: 'k',
    fingerprint: `{"amount":${amount}}`,
    body: { from: 'a0', to: 'b0', amount },
    ...over,
  }
}

/** Claims and completes `r` as the contract says a successful first request does. */
function executed(m: ModelState, r: Request) {
  const allowed = decide(m, r)
  expect(allowed.kind).toBe('executes')
  if (allowed.kind !== 'executes') throw new Error('unreachable')
  claim(m, r)
  complete(m, r, allowed.outcome, {
    seen: true,
    status: allowed.outcome.status,
    body: '{"id":"tr_1"}',
    contentType: 'application/json',
    location: '/transfers/tr_1',
  })
  return allowed.outcome
}

const reply = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Reply({
    request: { method: 'POST', url: 'http://x/transfers', headers: {} },
    response: { status, headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) },
    ms: 1,
  })

describe('the model of the contract', () => {
  it('stage 0 executes every request; stage 1 executes a key once and answers 200 already-processed after', () => {
    const zero = bank(0)
    executed(zero, transfer())
    expect(decide(zero, transfer()).kind).toBe('executes')
    const one = bank(1)
    executed(one, transfer())
    expect(decide(one, transfer({ amount: 2_000 }))).toEqual({ kind: 'already-processed', key: 'k' })
    expect(decide(one, transfer({ key: undefined })).kind).toBe('key-missing')
  })

  it('the bank decides the outcome from the balances: 402 beyond the balance, 403 from another client, 404 to no account', () => {
    const m = bank(1)
    expect(decide(m, transfer({ key: 'x', amount: 10_001 }))).toMatchObject({ outcome: { status: 402 } })
    expect(decide(m, transfer({ key: 'y', client: 1 }))).toMatchObject({ outcome: { status: 403 } })
    expect(decide(m, transfer({ key: 'z', body: { from: 'a0', to: 'nowhere', amount: 1 } }))).toMatchObject({ outcome: { status: 404 } })
    const out = executed(m, transfer({ key: 'w', amount: 4_000 }))
    expect(out).toMatchObject({ status: 201, balanceAfter: 6_000 })
    expect(m.accounts.get('b0')!.balance).toBe(14_000)
    expect(m.entries).toBe(1)
  })

  it('stage 2: another body under a used key is 422; the same value is the same body', () => {
    const m = bank(2)
    executed(m, transfer())
    expect(decide(m, transfer({ amount: 2_000 })).kind).toBe('key-reused')
    expect(decide(m, transfer()).kind).toBe('already-processed')
  })

  it('stage 1 keeps a key claimed after a 503; stage 3 releases it', () => {
    for (const [stage, after] of [
      [1, 'already-processed'],
      [3, 'executes'],
    ] as const) {
      const m = bank(stage)
      const first = transfer()
      claim(m, first)
      release(m, first)
      expect(decide(m, transfer()).kind, `stage ${stage}`).toBe(after)
    }
  })

  it('stage 3: 409 in flight until the lease ends, Retry-After the seconds left, and a takeover at lease_until exactly', () => {
    const m = bank(3)
    claim(m, transfer())
    m.now = T0 + LEASE - 1
    expect(decide(m, transfer())).toEqual({ kind: 'in-flight', retryAfter: [1, 1] })
    m.now = T0 + 12_500
    expect(decide(m, transfer())).toEqual({ kind: 'in-flight', retryAfter: [17, 18] })
    m.now = T0 + LEASE
    expect(decide(m, transfer()).kind).toBe('executes')
    expect(decide(m, transfer({ amount: 7 })).kind, 'a different body still gets 422 after the lease').toBe('key-reused')
  })

  it('stage 4 replays the stored answer; stage 3 only says it was processed', () => {
    const three = bank(3)
    executed(three, transfer())
    expect(decide(three, transfer()).kind).toBe('already-processed')
    const four = bank(4)
    executed(four, transfer())
    expect(decide(four, transfer())).toMatchObject({ kind: 'replay', stored: { seen: true, status: 201 } })
  })

  it('stage 5: keys are scoped by client and route, and forgotten at first request + TTL, not at the last retry', () => {
    const m = bank(5)
    executed(m, transfer())
    expect(decide(m, transfer({ client: 1 })).kind, "another client's key is its own").toBe('executes')
    expect(decide(m, transfer({ route: 'POST /deposits' })).kind, 'another route is another key').toBe('executes')
    m.now = T0 + TTL - 1
    expect(decide(m, transfer()).kind).toBe('replay')
    m.now = T0 + TTL
    expect(decide(m, transfer()).kind).toBe('executes')
    expect(decide(m, transfer({ amount: 5 })).kind, 'an expired key is unknown: no 422').toBe('executes')
  })

  it('stage 5: a claim in progress under a live lease outlives its TTL until the lease runs out', () => {
    const m = bank(5)
    claim(m, transfer())
    m.now = T0 + TTL - 10_000
    claim(m, transfer()) // taken over 10 s before the TTL: its lease runs 20 s past it
    m.now = T0 + TTL + 5_000
    expect(decide(m, transfer()).kind).toBe('in-flight')
    m.now = T0 + TTL - 10_000 + LEASE
    expect(decide(m, transfer()).kind).toBe('executes')
  })
})

describe('judging an answer against the model', () => {
  it('a replay must be the first bytes, marked; a first answer must not be marked (course rule)', () => {
    const m = bank(4)
    executed(m, transfer())
    const allowed = decide(m, transfer())
    const exact = reply(201, '{"id":"tr_1"}', { location: '/transfers/tr_1', 'idempotent-replayed': 'true' })
    expect(deviation(m, exact, allowed)).toBeUndefined()
    expect(String(deviation(m, reply(201, '{"id":"tr_2"}', { location: '/transfers/tr_1', 'idempotent-replayed': 'true' }), allowed)?.got)).toMatch(
      /not the first answer's bytes/,
    )
    expect(deviation(m, reply(201, '{"id":"tr_1"}', { location: '/transfers/tr_1' }), allowed)).toMatchObject({ rule: 'replayMarker' })
  })

  it('an execution is judged by its status and its money, balanceAfter included', () => {
    const m = bank(1)
    const allowed = decide(m, transfer({ key: 'n', amount: 2_500 }))
    expect(deviation(m, reply(201, { id: 'tr_9', from: 'a0', to: 'b0', amount: 2_500, balanceAfter: 7_500 }), allowed)).toBeUndefined()
    expect(String(deviation(m, reply(201, { id: 'tr_9', from: 'a0', to: 'b0', amount: 2_500, balanceAfter: 10_000 }), allowed)?.got)).toMatch(
      /balanceAfter 10000 where 7500/,
    )
    expect(deviation(m, reply(200, { status: 'already-processed' }), allowed)).toBeDefined()
  })

  it('a 409 in flight needs the seconds left in Retry-After (course rule), and stage 5 answers carry the policy (course rule)', () => {
    const m = bank(5)
    claim(m, transfer())
    m.now = T0 + 20_000
    const allowed = decide(m, transfer())
    const policy = { 'idempotency-key-policy': 'ttl=86400, lease=30, scope="client route"' }
    const problem = { type: '/problems/request-in-flight', title: 'In flight', status: 409 }
    expect(deviation(m, reply(409, problem, { 'retry-after': '10', ...policy }), allowed)).toBeUndefined()
    expect(deviation(m, reply(409, problem, { 'retry-after': '30', ...policy }), allowed)).toMatchObject({ rule: 'retryAfter' })
    expect(deviation(m, reply(409, problem, { 'retry-after': '10' }), allowed)).toMatchObject({ rule: 'policyHeader' })
  })
})

describe('the histories of a grade', () => {
  const stage6: Alphabet = { instances: 3, clock: true, ttl: true, faultPoint: true, holdAlone: true }
  const sample = (motif: MotifKind, seed: number, first: 'executes' | 'refused' = 'executes') =>
    fc.sample(historyArbitrary(stage6, 14, { motif, first }), { seed, numRuns: 50 })

  it('a tour history holds its motif on a transfer of client 0 that executes: an existing account, 9,000 of the opening 40,000 at most', () => {
    for (const kind of motifKinds(stage6))
      for (const history of sample(kind, 7)) {
        for (const intent of history.intents) {
          expect(intent.owner, kind).toBe(0)
          expect(intent.to, kind).not.toBe('missing')
          expect(intent.amount, kind).toBeLessThanOrEqual(9_000)
        }
        const first = history.ops.find((op) => op.op === 'send')!
        expect(first, kind).toMatchObject({ client: 0 })
      }
  })

  it('the tour runs the motifs whose transitions differ a second time, on a first request the bank refuses: over any balance, or to a missing account', () => {
    const refused = tourOf(stage6)
      .filter((t) => t.first === 'refused')
      .map((t) => t.motif)
    expect(refused).toEqual(['clock', 'hold', 'lapsed-release', 'superseded'])
    expect(tourOf(stage6)).toHaveLength(motifKinds(stage6).length + refused.length)
    for (const kind of refused)
      for (const history of sample(kind, 9, 'refused'))
        for (const intent of history.intents) {
          expect(intent.owner, kind).toBe(0)
          // Over any balance a history holds (two accounts of 40,000, a top-up of 20,000), or nowhere to go.
          expect(intent.to === 'missing' || (intent.route === 'transfers' && intent.amount > 100_000), kind).toBe(true)
        }
  })

  it("stage 6's held request is duplicated through another instance, a skewed one, so that Retry-After is counted by the database's clock", () => {
    for (const history of sample('hold', 11)) {
      const hold = history.ops.findIndex((op) => op.op === 'hold')
      const [first, duplicate] = history.ops.slice(hold + 1, hold + 3) as SendOp[]
      const holder = (history.ops[hold] as { instance: number }).instance
      expect(first.instance).toBe(holder)
      expect(duplicate.op).toBe('send')
      expect(duplicate.instance).not.toBe(holder)
      expect(duplicate.instance).not.toBe(0)
      expect(duplicate.change === 'same' || duplicate.change === 'reserialized' || duplicate.change === first.change).toBe(true)
    }
  })

  it('every motif the alphabet can build is in the tour; the clock and takeover motifs only on a clock the grader can move, takeovers only with a core that holds one call', () => {
    expect(motifKinds(stage6)).toEqual([
      'clock',
      'top-up',
      'header-forms',
      'first-fails',
      'crash',
      'crash-after-commit',
      'hold',
      'held-fails',
      'lapsed-release',
      'lapsed-fails',
      'superseded',
      'superseded-fails',
      'two-takeovers',
      'takeover-fails',
      'expired-fails',
      'purged-by-another',
      'purge-while-held',
    ])
    expect(motifKinds({ ...stage6, clock: false })).toEqual(['top-up', 'header-forms', 'first-fails', 'crash', 'crash-after-commit', 'hold', 'held-fails'])
    expect(motifKinds({ ...stage6, holdAlone: false })).toEqual([
      'clock',
      'top-up',
      'header-forms',
      'first-fails',
      'crash',
      'crash-after-commit',
      'hold',
      'lapsed-release',
      'expired-fails',
      'purged-by-another',
    ])
  })

  it('a superseded original is held alone past its lease, taken over through a skewed instance, let go, then retried through the third instance', () => {
    for (const kind of ['superseded', 'superseded-fails'] as const)
      for (const history of sample(kind, 13)) {
        const original = history.ops.findIndex((op) => op.op === 'send' && op.holdAlone)
        const [first, clock, otherBody, takeover, letGo, last] = history.ops.slice(original, original + 6) as [SendOp, Op, SendOp, SendOp, Op, SendOp]
        expect(clock).toMatchObject({ op: 'clock', to: 'lease-end' })
        expect(otherBody).toMatchObject({ op: 'send', key: first.key, intent: first.intent, instance: takeover.instance })
        expect(['same', 'reserialized']).not.toContain(otherBody.change)
        expect(takeover).toMatchObject({ op: 'send', holdAlone: false, key: first.key, intent: first.intent, client: first.client })
        expect(takeover.instance).not.toBe(first.instance)
        expect(takeover.instance).not.toBe(0)
        expect(letGo).toEqual({ op: 'let-go', key: first.key, fails: kind === 'superseded-fails' })
        expect(new Set([first.instance, takeover.instance, last.instance]).size, kind).toBe(3)
      }
  })

  it("a purge while a claim is held: the other key completes, the claim is held alone past the TTL, the other client's request purges, then a duplicate meets the claim before it is let go", () => {
    for (const history of sample('purge-while-held', 19)) {
      const held = history.ops.findIndex((op) => op.op === 'send' && op.holdAlone)
      const [completed, claim, clock, purger, duplicate, letGo] = history.ops.slice(held - 1, held + 5) as [SendOp, SendOp, Op, Op, SendOp, Op]
      expect(completed).toMatchObject({ op: 'send', holdAlone: false, intent: claim.intent })
      expect(completed.key).not.toBe(claim.key)
      expect(clock).toMatchObject({ op: 'clock', to: 'ttl-end', key: claim.key })
      expect(purger).toEqual({ op: 'top-up', client: 1 - claim.client })
      expect(duplicate).toMatchObject({ op: 'send', key: claim.key, holdAlone: false })
      expect(duplicate.instance).not.toBe(claim.instance)
      expect(letGo).toEqual({ op: 'let-go', key: claim.key, fails: false })
    }
  })

  it("two takeovers in a row: two requests held alone, a duplicate inside the first takeover's lease, each superseded, both let go after the third completes", () => {
    for (const history of sample('two-takeovers', 17)) {
      const original = history.ops.findIndex((op) => op.op === 'send' && op.holdAlone)
      const steps = history.ops.slice(original, original + 8)
      expect(steps.map((op) => op.op)).toEqual(['send', 'clock', 'send', 'send', 'clock', 'send', 'let-go', 'let-go'])
      expect(steps.filter((op) => op.op === 'send' && op.holdAlone)).toHaveLength(2)
    }
  })
})
