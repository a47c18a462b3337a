// What the clients mean to do on the day, before any time or key is attached:
// each intent's client, incident kind, payload, and the shape of its attempts
// (their faults and their delays after the first). generator.ts lays them out
// in time.
import type { Rng } from '#harness/rng.ts'
import { accountName, JITTER, lowAccountName, PROFILES, type ClientProfile } from './clients.ts'
import { expectOf, type Expect, type Fault, type IncidentKind, kindRow } from './faults.ts'
import type { Cause, ClientName } from './format.ts'
import type { Json } from './serialize.ts'

export type Payload = { [key: string]: Json }

export type PlannedAttempt = {
  cause: Cause
  fault: Fault
  /** Delay after the intent's first attempt (server-restart intents: after the kill). */
  offsetMs: number
  /** The amended payload (teller-amendment), else the intent's payload. */
  payload: Payload
  /** Written by the client's retry serializer rather than its first-request one. */
  retryStyle: boolean
}

export type PlannedIntent = {
  client: ClientProfile
  kind: IncidentKind
  expect: Expect
  path: '/transfers' | '/deposits'
  payload: Payload
  attempts: PlannedAttempt[]
  /** shared-key: the other client's intent whose key string this one reuses. */
  keyFrom?: PlannedIntent
}

/** The opening balance the replayer gives accounts that only insufficient-funds intents debit. */
export const LOW_BALANCE = 1_000
const REFUSED_MIN_AMOUNT = 50_000

const MEMOS: Record<ClientName, readonly string[]> = {
  'mobile-app': ['점심값', '월세', '생일 축하해', '회비', '택시비 정산', '커피', '관리비 11월', '용돈', 'dinner split', 'rent'],
  'web-app': ['order payment', '주문 결제', 'gift card', 'subscription'],
  'teller-desk': ['창구', '지점 업무', 'branch 014 / counter 3', '공과금'],
  'partner-batch': ['정산', 'settlement', '수수료 정산', 'payout'],
}

export class IntentPlanner {
  private readonly signatures = new Set<string>()
  private readonly allTargets: string[]

  constructor(private readonly rng: Rng) {
    this.allTargets = Object.values(PROFILES).flatMap((p) => Array.from({ length: p.accounts }, (_, i) => accountName(p, i + 1)))
  }

  /**
   * A payload whose (path, from, to, amount) no other intent uses: that is how
   * the replayer tells which ledger row belongs to which intent.
   */
  private payload(p: ClientProfile, path: PlannedIntent['path'], refused: boolean): Payload {
    const { rng } = this
    for (;;) {
      const from = refused ? lowAccountName(p, rng.int(1, p.lowAccounts)) : accountName(p, rng.int(1, p.accounts))
      const to = path === '/deposits' ? accountName(p, rng.int(1, p.accounts)) : rng.pick(this.allTargets)
      if (path === '/transfers' && to === from) continue
      const amount = rng.amount(refused ? Math.max(REFUSED_MIN_AMOUNT, p.amount.min) : p.amount.min, p.amount.max)
      if (!this.claimSignature(path, path === '/deposits' ? null : from, to, amount)) continue
      const body: Payload = path === '/deposits' ? { to, amount } : { from, to, amount }
      this.decorate(p, body)
      return body
    }
  }

  private claimSignature(path: string, from: Json, to: Json, amount: number): boolean {
    const sig = `${path}|${from}|${to}|${amount}`
    if (this.signatures.has(sig)) return false
    this.signatures.add(sig)
    return true
  }

  /** memo and metadata: text and nested objects, what canonicalization has to get right. */
  private decorate(p: ClientProfile, body: Payload) {
    const { rng } = this
    if (rng.chance(0.3)) body.memo = rng.pick(MEMOS[p.name])
    if (p.name === 'web-app' && rng.chance(0.25)) body.metadata = { channel: 'web', cart: { items: rng.int(1, 6) } }
    if (p.name === 'partner-batch') body.metadata = { ref: `PX-${rng.int(10_000, 99_999)}` }
  }

  /** Seconds of backoff before each retry, jitter included, as offsets after the first attempt. */
  private retryOffsets(p: ClientProfile, count: number, startMs = 0): number[] {
    const out: number[] = []
    let t = startMs
    for (const seconds of p.backoffSeconds.slice(0, count)) {
      t += Math.round(seconds * 1000 * (1 + (JITTER * this.rng.int(0, 1000)) / 1000))
      out.push(t)
    }
    return out
  }

  private intent(
    client: ClientName,
    kind: IncidentKind,
    attempts: (payload: Payload) => PlannedAttempt[],
    path: PlannedIntent['path'] = '/transfers',
  ): PlannedIntent {
    const p = PROFILES[client]
    const expect = expectOf(kind)
    const payload = this.payload(p, path, expect === 'insufficient-funds')
    return { client: p, kind, expect, path, payload, attempts: attempts(payload) }
  }

  /** A first attempt with `faults`, then retries until one goes through. */
  private chain(client: ClientName, kind: IncidentKind, faults: Fault[], path?: PlannedIntent['path']): PlannedIntent {
    const offsets = [0, ...this.retryOffsets(PROFILES[client], faults.length)]
    return this.intent(
      client,
      kind,
      (payload) => offsets.map((offsetMs, i) => ({ cause: i === 0 ? 'first' : 'retry', fault: faults[i] ?? 'none', offsetMs, payload, retryStyle: i > 0 })),
      path,
    )
  }

  /** The fault that makes `kind` (logs/faults.ts), on the first attempt; none for a kind without one. */
  private firstFault(kind: IncidentKind): Fault[] {
    const { firstFault } = kindRow(kind)
    return firstFault === 'none' ? [] : [firstFault]
  }

  /** The kind's fault, and sometimes a second one on the first retry: retries with backoff. */
  private faults(kind: IncidentKind): Fault[] {
    const first = this.firstFault(kind)
    return this.rng.chance(0.12) ? [...first, 'reset-before'] : first
  }

  plain(client: ClientName): PlannedIntent {
    return this.chain(client, 'plain', this.firstFault('plain'), this.pathFor(client))
  }

  private pathFor(client: ClientName): PlannedIntent['path'] {
    return this.rng.chance(PROFILES[client].depositShare) ? '/deposits' : '/transfers'
  }

  /** An ordinary intent of `client`, with the incidents that client runs into. */
  ordinary(client: ClientName): PlannedIntent {
    const { rng } = this
    const p = PROFILES[client]
    const roll = rng.int(0, 999)
    const interactive = client === 'mobile-app' || client === 'web-app'
    // The response is lost: same bytes again, or re-serialized by the client's library.
    const timeoutKind: IncidentKind = p.reserializes ? 'reserialized-retry' : 'gateway-timeout'
    if (roll < 50) return this.chain(client, timeoutKind, this.faults(timeoutKind), this.pathFor(client))
    if (roll < 80) return this.chain(client, 'connection-reset', this.faults('connection-reset'), this.pathFor(client))
    if (interactive && roll < 110)
      return this.intent(client, 'double-tap', (payload) =>
        (['first', 'double-tap'] as const).map((cause) => ({ cause, fault: 'none', offsetMs: 0, payload, retryStyle: false })),
      )
    if (interactive && roll < 125) return this.chain(client, 'insufficient-funds', rng.chance(0.5) ? this.firstFault('insufficient-funds') : [])
    return this.plain(client)
  }

  /** The teller's screen times out; the teller corrects the amount and sends again with the same key. */
  tellerAmendment(): PlannedIntent {
    const intent = this.intent('teller-desk', 'teller-amendment', () => [], this.pathFor('teller-desk'))
    const { payload } = intent
    const amount = payload.amount as number
    let amended: Payload | undefined
    while (!amended) {
      // The typical slips: a zero too many or too few, or the wrong figure in one place.
      const corrected = this.rng.pick([amount * 10, amount / 10, amount + 100_000, amount - 10_000, amount + 1_000])
      if (Number.isInteger(corrected) && corrected >= 1_000 && this.claimSignature(intent.path, payload.from ?? null, payload.to!, corrected))
        amended = { ...payload, amount: corrected }
    }
    intent.attempts = [
      { cause: 'first', fault: kindRow('teller-amendment').firstFault, offsetMs: 0, payload, retryStyle: false },
      { cause: 'amendment', fault: 'none', offsetMs: this.rng.int(20, 90) * 1000, payload: amended, retryStyle: false },
    ]
    return intent
  }

  /** A web shop and a partner's batch both use order numbers as keys, from overlapping ranges. */
  sharedKeyPair(): [PlannedIntent, PlannedIntent] {
    const first = this.chain('web-app', 'shared-key', this.firstFault('shared-key'))
    const second = this.chain('partner-batch', 'shared-key', this.firstFault('shared-key'))
    second.keyFrom = first
    return [first, second]
  }

  /** In flight when the server is killed; then the client's whole retry schedule, counted from the kill. */
  inFlightAtRestart(client: ClientName, msBeforeKill: number): PlannedIntent {
    const retries = this.retryOffsets(PROFILES[client], PROFILES[client].backoffSeconds.length, msBeforeKill)
    return this.intent(client, 'server-restart', (payload) => [
      { cause: 'first', fault: kindRow('server-restart').firstFault, offsetMs: 0, payload, retryStyle: false },
      ...retries.map((offsetMs): PlannedAttempt => ({ cause: 'retry', fault: 'none', offsetMs, payload, retryStyle: true })),
    ])
  }
}
