// The contract as a state machine: what a bank at stage N may answer to one
// operation of a history, and what that answer does to the ledger.
//
// Written from CONTRACT.md ("What each stage adds" and "Each stage in
// detail"), not from the solutions. Stage N's model holds exactly what stages
// 0–N promise: each promise is switched on by the stage that makes it
// (`promisesOf`), and a convention beyond draft-07 names its course rule, so
// a failure about it carries the label (grader/engine/courseRule.ts).
//
// The model is pure: `decide` reads the state and returns the answer allowed;
// `apply` is the only function that changes the state, and it is given what
// the server actually answered where the contract leaves a choice (the bytes
// of a first response, which a replay must then repeat exactly).
import { MAX_BALANCE } from '#bank/money.ts'
import type { CourseRule } from '../engine/courseRule.ts'

/** What stages 0–N promise, one switch per stage that adds a promise. */
export type Promises = {
  stage: number
  /** 1: a money POST needs a key; a key seen before never executes again. */
  keys: boolean
  /** 2: a key stands for one body (RFC 8785 fingerprint); another body is 422. */
  fingerprint: boolean
  /** 3: in_progress under a lease (409 in flight), takeover after it, owner-checked completion, a 5xx releases. */
  leases: boolean
  /** 4: a completed key replays the first response, byte for byte, marked. */
  replay: boolean
  /** 5: keys scoped by (client, route); forgotten TTL after the first request; the policy published. */
  scopeAndTtl: boolean
}

export function promisesOf(stage: number): Promises {
  return { stage, keys: stage >= 1, fingerprint: stage >= 2, leases: stage >= 3, replay: stage >= 4, scopeAndTtl: stage >= 5 }
}

export type Periods = { leaseMs: number; ttlMs: number }

/**
 * The models a stage N server is judged against: N's and every later one up
 * to 5, since a server may already keep a later stage's promises (CONTRACT.md:
 * a stage 5 server passes every stage's checks). Stage 6 is stage 5's
 * contract on PostgreSQL, judged by itself.
 */
export function candidateStages(stage: number): number[] {
  if (stage >= 6) return [stage]
  return Array.from({ length: 6 - stage }, (_, i) => stage + i)
}

/** A money-moving request, resolved to concrete accounts. */
export type Request = {
  /** The step that sent it: a claim's owner is the request holding it. */
  id: number
  client: number
  route: 'POST /transfers' | 'POST /deposits'
  /** The key as the layer must read it (a quoted form already unquoted); undefined when no header was sent. */
  key: string | undefined
  /** The header is a quoted form RFC 8941 refuses (or with a parameter): 400 malformed from stage 1. */
  malformed?: true
  /** The body's RFC 8785 canonical form: equal for one value however it is written. */
  fingerprint: string
  body: { from?: string; to: string; amount: number }
}

/** The bank's own answer to an executed request (stage 0's contract). */
export type BankOutcome = { status: 201; from?: string; to: string; amount: number; balanceAfter: number } | { status: 402 | 403 | 404 | 422; type: string }

/** A first answer, stored with the completion (stage 4) and replayed. */
export type StoredAnswer =
  | { seen: true; status: number; body: string; contentType: string | undefined; location: string | undefined }
  /** The server died after the commit, before answering: its stored bytes are known only from their first replay. */
  | { seen: false; outcome: BankOutcome }

type KeyRow = {
  fingerprint: string
  status: 'in_progress' | 'completed'
  /** The request holding an in_progress claim. */
  owner: number | undefined
  leaseUntil: number
  /** When the key was first claimed: its TTL counts from here, never moved by a retry. */
  firstAt: number
  stored: StoredAnswer | undefined
}

export type Account = { id: string; client: number; balance: number }

export type ModelState = {
  promises: Promises
  periods: Periods
  now: number
  accounts: Map<string, Account>
  /** Ledger rows moved by this history. */
  entries: number
  keys: Map<string, KeyRow>
}

/** What the contract allows as the answer to one request. */
export type Allowed =
  | { kind: 'executes'; outcome: BankOutcome }
  | { kind: 'core-unavailable' }
  | { kind: 'already-processed'; key: string }
  | { kind: 'replay'; stored: StoredAnswer }
  | { kind: 'key-reused' }
  | { kind: 'in-flight'; retryAfter: [number, number] }
  | { kind: 'claim-lost' }
  | { kind: 'key-missing' }
  | { kind: 'key-malformed' }

/** Headers the contract requires on an answer, with the rule that makes them a convention. */
export type RequiredHeaders = {
  /** Idempotency-Key-Policy's members (stage 5). */
  policy?: { ttl: number; lease: number; rule: CourseRule }
  /** Idempotent-Replayed: true present (a replay) or absent (every other answer), from stage 4. */
  marker?: { present: boolean; rule: CourseRule }
}

export function newModel(stage: number, periods: Periods, now: number, accounts: Account[]): ModelState {
  return { promises: promisesOf(stage), periods, now, accounts: new Map(accounts.map((a) => [a.id, { ...a }])), entries: 0, keys: new Map() }
}

export function cloneModel(m: ModelState): ModelState {
  return {
    ...m,
    accounts: new Map([...m.accounts].map(([id, a]) => [id, { ...a }])),
    keys: new Map([...m.keys].map(([k, row]) => [k, { ...row }])),
  }
}

/** A key's identity: the string alone until stage 5, then (client, route, key). */
export function scopeOf(m: ModelState, r: Pick<Request, 'client' | 'route' | 'key'>): string {
  return m.promises.scopeAndTtl ? JSON.stringify([r.client, r.route, r.key]) : JSON.stringify(r.key)
}

/** The key's row as the contract sees it now: an expired key is unknown, purged or not (stage 5). */
export function liveRow(m: ModelState, scope: string): KeyRow | undefined {
  const row = m.keys.get(scope)
  if (!row || !m.promises.scopeAndTtl) return row
  const expired = m.now >= row.firstAt + m.periods.ttlMs
  // One exception: a claim still in progress under a live lease is kept until the lease runs out.
  const leaseLive = row.status === 'in_progress' && m.now < row.leaseUntil
  return expired && !leaseLive ? undefined : row
}

/** The answer the contract allows to `r`, sent now, when the core would answer (not failing, not held). */
export function decide(m: ModelState, r: Request): Allowed {
  const p = m.promises
  if (!p.keys) return { kind: 'executes', outcome: bankOutcome(m, r) }
  if (r.key === undefined) return { kind: 'key-missing' }
  if (r.malformed) return { kind: 'key-malformed' }
  const row = liveRow(m, scopeOf(m, r))
  if (!row) return { kind: 'executes', outcome: bankOutcome(m, r) }
  if (p.fingerprint && row.fingerprint !== r.fingerprint) return { kind: 'key-reused' }
  if (!p.leases || row.status === 'completed') {
    if (p.replay && row.stored) return { kind: 'replay', stored: row.stored }
    return { kind: 'already-processed', key: r.key }
  }
  if (m.now < row.leaseUntil) {
    const left = row.leaseUntil - m.now
    return { kind: 'in-flight', retryAfter: [Math.max(1, Math.floor(left / 1000)), Math.max(1, Math.ceil(left / 1000))] }
  }
  // The lease ran out: this request takes the claim over and executes.
  return { kind: 'executes', outcome: bankOutcome(m, r) }
}

/** The headers every answer to a money POST that reached the layer must carry. */
export function requiredHeaders(m: ModelState, allowed: Allowed): RequiredHeaders {
  const p = m.promises
  return {
    ...(p.scopeAndTtl
      ? { policy: { ttl: Math.floor(m.periods.ttlMs / 1000), lease: Math.ceil(m.periods.leaseMs / 1000), rule: 'policyHeader' as CourseRule } }
      : {}),
    ...(p.replay && allowed.kind !== 'key-missing' && allowed.kind !== 'key-malformed'
      ? { marker: { present: allowed.kind === 'replay', rule: 'replayMarker' as CourseRule } }
      : {}),
  }
}

/** The bank's stage 0 answer to executing `r` on the model's balances. */
export function bankOutcome(m: ModelState, r: Request): BankOutcome {
  const account = (id: string | undefined) => (id === undefined ? undefined : m.accounts.get(id))
  const to = account(r.body.to)
  if (r.route === 'POST /deposits') {
    if (!to) return { status: 404, type: '/problems/account-not-found' }
    if (to.client !== r.client) return { status: 403, type: '/problems/not-account-owner' }
    if (to.balance > MAX_BALANCE - r.body.amount) return { status: 422, type: '/problems/balance-limit' }
    return { status: 201, to: r.body.to, amount: r.body.amount, balanceAfter: to.balance + r.body.amount }
  }
  const from = account(r.body.from)
  if (!from) return { status: 404, type: '/problems/account-not-found' }
  if (from.client !== r.client) return { status: 403, type: '/problems/not-account-owner' }
  if (!to) return { status: 404, type: '/problems/account-not-found' }
  if (from.balance < r.body.amount) return { status: 402, type: '/problems/insufficient-funds' }
  if (to.balance > MAX_BALANCE - r.body.amount) return { status: 422, type: '/problems/balance-limit' }
  return { status: 201, from: r.body.from, to: r.body.to, amount: r.body.amount, balanceAfter: from.balance - r.body.amount }
}

// ---- the effects ---------------------------------------------------------------

/** The claim a request makes when it is allowed to execute: new, or a takeover after the lease. */
export function claim(m: ModelState, r: Request): void {
  if (!m.promises.keys || r.key === undefined) return
  const scope = scopeOf(m, r)
  const row = liveRow(m, scope)
  if (row) {
    row.owner = r.id
    row.leaseUntil = m.now + m.periods.leaseMs
    return
  }
  m.keys.set(scope, {
    fingerprint: r.fingerprint,
    status: 'in_progress',
    owner: r.id,
    leaseUntil: m.now + m.periods.leaseMs,
    firstAt: m.now,
    stored: undefined,
  })
}

/** Whether `r` still holds its claim: only the holder may complete (stage 3). */
export function holdsClaim(m: ModelState, r: Request): boolean {
  if (!m.promises.leases || r.key === undefined) return true
  const row = m.keys.get(scopeOf(m, r))
  return row?.status === 'in_progress' && row.owner === r.id
}

/**
 * The money moved (or was refused by the bank) and the key completed in the
 * same transaction. `stored` is the first answer as the server sent it, or
 * its expected outcome when the server died before sending it.
 */
export function complete(m: ModelState, r: Request, outcome: BankOutcome, stored: StoredAnswer): void {
  if (outcome.status === 201) {
    m.entries++
    const to = m.accounts.get(outcome.to)!
    to.balance += outcome.amount
    if (outcome.from) m.accounts.get(outcome.from)!.balance -= outcome.amount
  }
  if (!m.promises.keys || r.key === undefined) return
  const row = m.keys.get(scopeOf(m, r))
  if (!row) return
  row.status = 'completed'
  row.owner = undefined
  if (m.promises.replay) row.stored = stored
}

/** A 5xx moved nothing: from stage 3 the key is released (its own claim only); before, it stays claimed. */
export function release(m: ModelState, r: Request): void {
  if (!m.promises.leases || r.key === undefined) return
  const scope = scopeOf(m, r)
  if (m.keys.get(scope)?.owner === r.id) m.keys.delete(scope)
}

/** The first replay of an answer the server never sent fixes its bytes: later replays repeat them. */
export function learnStored(m: ModelState, r: Request, seen: StoredAnswer & { seen: true }): void {
  const row = m.keys.get(scopeOf(m, r))
  if (row?.stored && !row.stored.seen) row.stored = seen
}

/** How often a lazy purge runs at the latest (CONTRACT.md, stage 5): the first request after min(TTL, 60 s) since the last one purges. */
export const purgeIntervalMs = (ttlMs: number) => Math.min(ttlMs, 60_000)

/**
 * The rows a purge now must have deleted (stage 5), by scope: expired, and no request can still be working under them (completed, or in
 * progress with the lease run out too).
 */
export function purgeable(m: ModelState): string[] {
  if (!m.promises.scopeAndTtl) return []
  return [...m.keys]
    .filter(([, row]) => m.now >= row.firstAt + m.periods.ttlMs && (row.status === 'completed' || m.now >= row.leaseUntil))
    .map(([scope]) => scope)
}

/** The key string a scope names (stage 5: [client, route, key]; before: the key). */
export function keyOfScope(scope: string): string {
  const parsed: unknown = JSON.parse(scope)
  return Array.isArray(parsed) ? String(parsed[2]) : String(parsed)
}

/** The moments a history's clock moves aim at: a key's last millisecond inside its lease or TTL, and the first outside. */
export function boundariesOf(m: ModelState, scope: string): { leaseLast: number; leaseEnd: number; ttlLast: number; ttlEnd: number } | undefined {
  const row = m.keys.get(scope)
  if (!row) return undefined
  const ttlEnd = row.firstAt + m.periods.ttlMs
  return { leaseLast: row.leaseUntil - 1, leaseEnd: row.leaseUntil, ttlLast: ttlEnd - 1, ttlEnd }
}
