// The day's judge on small synthetic exchanges, no server: it must agree with
// the grade (no-cross-client-signal) on what leaked across clients, and call a
// retry's answer a replay only when its bytes are the first answer's, and
// count a stored answer given to another body under the key.
import { describe, expect, it } from 'vitest'
import type { Ledger } from '#harness/bankClient.ts'
import { Reply, type Exchange } from '#harness/http.ts'
import { crossing } from '#grader/checks/stage5.ts'
import type { AttemptLine, ClientName } from '../logs/format.ts'
import type { IncidentKind } from '../logs/faults.ts'
import { causedByAnotherClient, judge } from '../replay/judge.ts'
import type { AttemptRecord } from '../replay/replayer.ts'
import type { World } from '../replay/world.ts'

// Real ids are the logical names: the world maps each to itself.
const world: World = { customers: new Map(), accountId: new Map(), accountName: new Map(), clientName: new Map() }

type Attempt = {
  client: ClientName
  intent: string
  kind: IncidentKind
  key: string
  body: object
  status: number
  answer: object
  headers?: Record<string, string>
}

/** One record per attempt, in the order given (each its own burst), each answered. */
function records(attempts: Attempt[]): AttemptRecord[] {
  const attemptNo = new Map<string, number>()
  return attempts.map((a, seq) => {
    const n = (attemptNo.get(a.intent) ?? 0) + 1
    attemptNo.set(a.intent, n)
    const body = JSON.stringify(a.body)
    const line: AttemptLine = {
      t: `00:00:0${seq}.000`,
      client: a.client,
      intent: a.intent,
      kind: a.kind,
      key: a.key,
      method: 'POST',
      path: '/transfers',
      attempt: n,
      cause: n === 1 ? 'first' : 'retry',
      fault: 'none',
      body,
    }
    const exchange: Exchange = {
      request: { method: 'POST', url: 'http://127.0.0.1:1/transfers', headers: {}, body },
      response: { status: a.status, headers: { 'content-type': 'application/json', ...a.headers }, body: JSON.stringify(a.answer) },
      ms: 1,
    }
    return { line, sent: true, seq, burst: seq, exchange }
  })
}

const ledger = (entries: Array<{ id: string; from: string; to: string; amount: number }>): Ledger => ({
  accounts: [],
  entries: entries.map((e) => ({ ...e, kind: 'transfer', clientId: 'c', createdAt: '2026-03-14T09:00:00.000Z' })),
})

const receipt = (id: string, b: { from: string; to: string; amount: number }) => ({ id, ...b, balanceAfter: 1_000 })
const problem = (status: number, type: string, extra: object = {}) => ({ type: `/problems/${type}`, title: type, status, ...extra })

describe('leaks across clients: the judge agrees with the grade', () => {
  const a = { from: 'ptn-001', to: 'ptn-002', amount: 5_000 }
  const b = { from: 'web-001', to: 'web-002', amount: 7_000 }
  const day = (status: number, answer: object) =>
    records([
      { client: 'partner-batch', intent: 'i00001', kind: 'shared-key', key: 'ord-1', body: a, status: 201, answer: receipt('tr_a', a) },
      { client: 'web-app', intent: 'i00002', kind: 'shared-key', key: 'ord-1', body: b, status, answer },
    ])

  it("a 417 to client B, caused by client A's use of the key (express-idempotency's answer), is a leak", () => {
    const v = judge(day(417, problem(417, 'expectation-failed')), ledger([{ id: 'tr_a', ...a }]), world)
    expect(v.byKind['shared-key'].leakedResponses, JSON.stringify(v.examples)).toBe(1)
    expect(v.examples.leakedResponses).toMatch(/^i00002 .*HTTP 417/)
  })

  it("B's own outcomes are not leaks: its 201, and a refusal decided by executing its own request", () => {
    expect(
      judge(
        day(201, receipt('tr_b', b)),
        ledger([
          { id: 'tr_a', ...a },
          { id: 'tr_b', ...b },
        ]),
        world,
      ).total.leakedResponses,
    ).toBe(0)
    expect(judge(day(402, problem(402, 'insufficient-funds')), ledger([{ id: 'tr_a', ...a }]), world).total.leakedResponses).toBe(0)
  })

  it('every 4xx status: a leak for the judge exactly when the grade calls it one', () => {
    for (let status = 400; status < 500; status++) {
      const answer = problem(status, 'something')
      const judged = judge(day(status, answer), ledger([{ id: 'tr_a', ...a }]), world).total.leakedResponses === 1
      const response = { status, headers: { 'content-type': 'application/problem+json' }, body: JSON.stringify(answer) }
      const graded = crossing(new Reply({ request: { method: 'POST', url: 'http://x/transfers', headers: {} }, response, ms: 1 }), []) !== undefined
      expect([status, judged], `HTTP ${status}`).toEqual([status, graded])
      expect(causedByAnotherClient(status)).toBe(graded)
    }
  })
})

describe('a replay is only a replay when its bytes are the first answer', () => {
  const low = { from: 'mob-low-001', to: 'mob-002', amount: 900_000 }
  const refused = (balance: number) => problem(402, 'insufficient-funds', { balance, amount: low.amount })
  const day = (retry: object, headers: Record<string, string> = { 'idempotent-replayed': 'true' }) =>
    records([
      { client: 'mobile-app', intent: 'i00010', kind: 'insufficient-funds', key: 'k-10', body: low, status: 402, answer: refused(1_000) },
      { client: 'mobile-app', intent: 'i00010', kind: 'insufficient-funds', key: 'k-10', body: low, status: 402, answer: retry, headers },
    ])

  it('a 402 answered again, marked as a replay, but with another balance in it: not replayed, recomputed', () => {
    const v = judge(day(refused(400)), ledger([]), world)
    expect(v.byKind['insufficient-funds'].unreplayedRetries, JSON.stringify(v.examples)).toBe(1)
    expect(v.examples.unreplayedRetries).toMatch(/answered HTTP 402 again, with other bytes than the first answer/)
  })

  it('the same 402, byte for byte: replayed', () => {
    expect(judge(day(refused(1_000)), ledger([]), world).total.unreplayedRetries).toBe(0)
  })

  it("a receipt of the intent's own transfer answered again with other bytes (a rebuilt body): not replayed", () => {
    const t = { from: 'mob-001', to: 'mob-002', amount: 3_000 }
    const day2 = (again: object) =>
      records([
        { client: 'mobile-app', intent: 'i00020', kind: 'gateway-timeout', key: 'k-20', body: t, status: 201, answer: receipt('tr_t', t) },
        { client: 'mobile-app', intent: 'i00020', kind: 'gateway-timeout', key: 'k-20', body: t, status: 201, answer: again },
      ])
    const rows = ledger([{ id: 'tr_t', ...t }])
    expect(judge(day2({ ...receipt('tr_t', t), balanceAfter: 42 }), rows, world).total.unreplayedRetries).toBe(1)
    expect(judge(day2(receipt('tr_t', t)), rows, world).total.unreplayedRetries).toBe(0)
  })
})

// CONTRACT.md: another body under a used key gets 422, never the stored answer.
// A refusal decided by executing (402, 403, 404) is stored like a receipt, so a
// store that replays before it compares bodies gives an amendment the first
// body's refusal: the amendment is ignored, as when it gets the first receipt.
describe("a stored answer given to another body is the amendment ignored, whatever the first answer's status", () => {
  const first = { from: 'tel-001', to: 'tel-002', amount: 60_000 }
  const amended = { ...first, amount: 45_000 }
  const refusals: Array<[number, object]> = [
    [402, problem(402, 'insufficient-funds', { balance: 1_000, amount: first.amount })],
    [403, problem(403, 'forbidden-account')],
    [404, problem(404, 'account-not-found')],
  ]
  const day = (status: number, answer: object, again: { status: number; answer: object; headers?: Record<string, string> }) =>
    records([
      { client: 'teller-desk', intent: 'i00030', kind: 'teller-amendment', key: 'k-30', body: first, status, answer },
      { client: 'teller-desk', intent: 'i00030', kind: 'teller-amendment', key: 'k-30', body: amended, ...again },
    ])

  it.for(refusals)('HTTP %i replayed to the amended amount: an ignored amendment, the difference in won', ([status, answer]) => {
    const v = judge(day(status, answer, { status, answer, headers: { 'idempotent-replayed': 'true' } }), ledger([]), world)
    expect(v.byKind['teller-amendment'].ignoredAmendments, JSON.stringify(v.examples)).toBe(1)
    expect(v.byKind['teller-amendment'].ignoredAmendmentAmount).toBe(15_000)
    expect(v.examples.ignoredAmendments).toContain(`answered with the first answer again (HTTP ${status}), not 422`)
  })

  it('the same bytes unmarked are the first answer again too', () => {
    const [status, answer] = refusals[0]!
    expect(judge(day(status, answer, { status, answer }), ledger([]), world).total.ignoredAmendments).toBe(1)
  })

  it('the 422 the contract asks for is no damage', () => {
    const [status, answer] = refusals[0]!
    const v = judge(day(status, answer, { status: 422, answer: problem(422, 'idempotency-key-reused') }), ledger([]), world)
    expect(v.total.ignoredAmendments + v.total.unreplayedRetries + v.total.spurious422s, JSON.stringify(v.examples)).toBe(0)
  })
})
