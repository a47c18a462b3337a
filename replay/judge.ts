// Compares what happened (the final ledger and every answer) with the ground
// truth of the log, and counts the damage. Definitions: logs/README.md.
import type { Exchange } from '#harness/http.ts'
import type { Ledger } from '#harness/bankClient.ts'
import { expectOf, faultRow, type Expect, type IncidentKind } from '../logs/faults.ts'
import { CATEGORIES, zeroByKind, zeroFigures, type CategoryId, type DamageReport, type Figures } from './damage.ts'
import type { AttemptRecord } from './replayer.ts'
import type { World } from './world.ts'

type Money = { from?: string; to: string; amount: number }
type Answer = NonNullable<Exchange['response']>

type Intent = {
  id: string
  kind: IncidentKind
  expect: Expect
  client: string
  key: string
  /** The first payload (parsed), and its amount. */
  first: unknown
  amount: number
  /** Ledger signatures of this intent (the amended amount has its own). */
  signatures: Set<string>
  records: AttemptRecord[]
  rows: Array<{ amount: number }>
}

const signature = (path: string, m: Money) => `${path}|${m.from ?? ''}|${m.to}|${m.amount}`

/** Key-order-independent comparison of two JSON values. */
function sameJson(a: unknown, b: unknown): boolean {
  const norm = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, norm((v as Record<string, unknown>)[k])]),
        )
      : Array.isArray(v)
        ? v.map(norm)
        : v
  return JSON.stringify(norm(a)) === JSON.stringify(norm(b))
}

const won = (n: number) => `₩${n.toLocaleString('en-US')}`

/**
 * Whether an answer with `status`, to a client's own request under a key
 * string another client used first, was caused by that other client's use of
 * it. The grade's rule (`no-cross-client-signal`, grader/checks/stage5.ts): a
 * 409 or a 422, or any other 4xx from 405 up (a 412, a 417 …): neither the
 * bank's own validation of this request (400, 401) nor an outcome of
 * executing it (402, 403, 404), so only the key, that is the other client's
 * request, can explain it.
 */
export function causedByAnotherClient(status: number): boolean {
  return status === 409 || status === 422 || (status >= 405 && status < 500)
}

/** Refusals decided by executing (stored and replayed from stage 4 on, CONTRACT.md): a retry gets them again, byte for byte. */
const EXECUTED_REFUSALS = new Set([402, 403, 404])

export type Verdict = Pick<DamageReport, 'byKind' | 'examples' | 'anomalies'> & { total: Figures }

export function judge(records: AttemptRecord[], ledger: Ledger, world: World): Verdict {
  const intents = new Map<string, Intent>()
  const bySignature = new Map<string, Intent>()
  for (const record of records) {
    const { line } = record
    const body = JSON.parse(line.body) as Money
    let intent = intents.get(line.intent)
    if (!intent) {
      intent = {
        id: line.intent,
        kind: line.kind,
        expect: expectOf(line.kind),
        client: line.client,
        key: line.key,
        first: body,
        amount: body.amount,
        signatures: new Set(),
        records: [],
        rows: [],
      }
      intents.set(line.intent, intent)
    }
    intent.records.push(record)
    const sig = signature(line.path, body)
    intent.signatures.add(sig)
    bySignature.set(sig, intent)
  }

  const anomalies: string[] = []
  for (const row of ledger.entries) {
    const name = (id: string | null) => (id === null ? undefined : (world.accountName.get(id) ?? id))
    const sig = signature(row.kind === 'deposit' ? '/deposits' : '/transfers', { from: name(row.from), to: name(row.to)!, amount: row.amount })
    const intent = bySignature.get(sig)
    if (intent) intent.rows.push(row)
    else anomalies.push(`ledger row ${row.id} (${row.kind} ${won(row.amount)}) belongs to no intent of the day`)
  }

  /** Which intent a 2xx body is the receipt of (undefined: not a receipt, e.g. already-processed). */
  const receiptOwner = (e: Exchange): Intent | undefined => {
    let body: { id?: unknown; from?: string; to?: string; amount?: number }
    try {
      body = JSON.parse(e.response!.body)
    } catch {
      return undefined
    }
    if (typeof body?.id !== 'string' || !/^(tr|dp)_/.test(body.id) || typeof body.to !== 'string') return undefined
    const path = body.id.startsWith('tr_') ? '/transfers' : '/deposits'
    const from = body.from === undefined ? undefined : (world.accountName.get(body.from) ?? body.from)
    return bySignature.get(signature(path, { from, to: world.accountName.get(body.to) ?? body.to, amount: body.amount! }))
  }

  // Who used which key string, in the order the attempts went out (for leaks).
  const usesOfKey = new Map<string, AttemptRecord[]>()
  for (const r of records) if (r.sent) usesOfKey.set(r.line.key, [...(usesOfKey.get(r.line.key) ?? []), r])
  const reachedServer = (r: AttemptRecord) => r.sent && faultRow(r.line.fault).reachesServer
  const before = (a: AttemptRecord, b: AttemptRecord) => a !== b && (a.seq < b.seq || a.burst === b.burst)
  /**
   * A refusal (402, 403, 404) that is, byte for byte, one another client got
   * earlier under the same key string: their stored response, replayed to the
   * wrong client, marked or not. (Receipts are judged by receiptOwner; 409,
   * 422 and 5xx bodies are about a key, not a request, and may repeat.)
   */
  const copiesForeignAnswer = (r: AttemptRecord, body: string) => {
    const status = r.exchange?.response?.status ?? 0
    if (status < 400 || status >= 500 || status === 409 || status === 422) return false
    return (usesOfKey.get(r.line.key) ?? []).some((o) => o.line.client !== r.line.client && before(o, r) && o.exchange?.response?.body === body)
  }

  const total = zeroFigures()
  const byKind = zeroByKind()
  const examples: Verdict['examples'] = {}
  const count = (intent: Intent, category: CategoryId, amount: number, example: () => string) => {
    const c = CATEGORIES.find((x) => x.id === category)!
    for (const f of [total, byKind[intent.kind]]) {
      f[c.id] += 1
      f[c.amount] += amount
    }
    examples[category] ??= `${intent.id} (${intent.kind}, ${intent.client}, key ${intent.key}): ${example()}`
  }

  for (const intent of intents.values()) {
    const rows = intent.rows
    if (rows.length > 1) for (const extra of rows.slice(1)) count(intent, 'duplicateTransfers', extra.amount, () => `${rows.length} ledger rows for one intent`)
    if (intent.expect !== 'insufficient-funds' && rows.length === 0)
      count(intent, 'lostTransfers', intent.amount, () => `no ledger row; answers: ${answers(intent)}`)
    if (intent.expect === 'insufficient-funds' && rows.length > 0)
      anomalies.push(`${intent.id} was planned to be refused for funds but moved ${won(rows[0]!.amount)}`)

    const sent = intent.records.filter((r) => r.sent && r.exchange)
    for (const r of sent) {
      const res = r.exchange!.response
      if (!res) continue
      const ok = res.status >= 200 && res.status < 300
      const owner = ok ? receiptOwner(r.exchange!) : undefined
      const ownBefore = intent.records.some((o) => reachedServer(o) && before(o, r))
      const foreignBefore = (usesOfKey.get(r.line.key) ?? []).some((o) => o.line.intent !== intent.id && reachedServer(o) && before(o, r))
      const payload = JSON.parse(r.line.body) as Money
      const amended = payload.amount !== intent.amount
      // The first answer this intent's client got (earlier in the day): what a replay of it must repeat, byte for byte.
      const firstAnswer = sent.filter((o) => o.seq < r.seq && o.exchange?.response).sort((x, y) => x.seq - y.seq)[0]?.exchange?.response
      const replayedAgain = firstAnswer && firstAnswer.status === res.status && sameOutcome(firstAnswer.body, res.body)
      if (
        (ok && owner && owner !== intent) ||
        copiesForeignAnswer(r, res.body) ||
        (!ownBefore && foreignBefore && (causedByAnotherClient(res.status) || res.headers['idempotent-replayed'] !== undefined || (ok && owner !== intent)))
      )
        count(intent, 'leakedResponses', intent.amount, () => `HTTP ${res.status} ${res.body.slice(0, 120)}`)
      else if (res.status === 422 && sameJson(payload, intent.first))
        count(intent, 'spurious422s', intent.amount, () => `HTTP 422 for a body equal to the first one: ${r.line.body.slice(0, 120)}`)
      else if (amended && ok) {
        if (!rows.some((row) => row.amount === payload.amount) && rows.some((row) => row.amount === intent.amount))
          count(
            intent,
            'ignoredAmendments',
            Math.abs(payload.amount - intent.amount),
            () => `amended to ${won(payload.amount)}, answered HTTP ${res.status}, ledger shows ${won(intent.amount)}`,
          )
      } else if (!sameJson(payload, intent.first) && ownBefore && storedRefusalAgain(res, firstAnswer))
        count(
          intent,
          'ignoredAmendments',
          Math.abs(payload.amount - intent.amount),
          () =>
            `attempt ${r.line.attempt}, ${won(payload.amount)} instead of ${won(intent.amount)}, answered with the first answer again (HTTP ${res.status}), not 422: ${res.body.slice(0, 120)}`,
        )
      else if (ok && ownBefore && owner !== intent)
        count(intent, 'unreplayedRetries', intent.amount, () => `attempt ${r.line.attempt} answered HTTP ${res.status} ${res.body.slice(0, 120)}`)
      // A replay is the first answer's bytes: a refusal (or this intent's own receipt) answered again with other bytes was recomputed, not replayed.
      else if (ownBefore && firstAnswer && replayedAgain && firstAnswer.body !== res.body)
        count(
          intent,
          'unreplayedRetries',
          intent.amount,
          () => `attempt ${r.line.attempt} answered HTTP ${res.status} again, with other bytes than the first answer: ${res.body.slice(0, 120)}`,
        )
    }
    const last = sent.at(-1)?.exchange
    const final = sent.some((r) => r.exchange!.response && r.exchange!.response.status !== 409 && r.exchange!.response.status < 500)
    if (!final && last?.response?.status === 409) count(intent, 'stuckKeys', intent.amount, () => `${sent.length} attempts, the last answered 409`)
  }
  return { total, byKind, examples, anomalies }
}

/**
 * Whether `again` repeats the outcome of `first` (the same status is assumed):
 * the same refusal decided by executing (402, 403, 404: their type), or the
 * same receipt (the same transfer id). Another outcome under the same status
 * (a new transfer, another refusal) is not a replay gone wrong: other figures
 * count it.
 */
function sameOutcome(first: string, again: string): boolean {
  const parse = (text: string): { id?: unknown; type?: unknown; status?: unknown } | undefined => {
    try {
      return JSON.parse(text)
    } catch {
      return undefined
    }
  }
  const [a, b] = [parse(first), parse(again)]
  if (!a || !b) return false
  if (typeof a.id === 'string') return a.id === b.id
  return typeof a.type === 'string' && a.type === b.type && typeof a.status === 'number' && EXECUTED_REFUSALS.has(a.status)
}

/**
 * Whether `res`, answering a body other than the key's first, is the first
 * body's refusal given to it again (CONTRACT.md: another body under a used key
 * gets 422, never the stored answer): a 402, 403 or 404 marked as a replay,
 * or the bytes of the first answer the client got. (A stored receipt given to
 * it is an amendment answered 2xx: the ledger tells whether it was ignored.)
 */
function storedRefusalAgain(res: Answer, firstAnswer: Answer | undefined): boolean {
  if (!EXECUTED_REFUSALS.has(res.status)) return false
  return res.headers['idempotent-replayed'] !== undefined || (firstAnswer?.status === res.status && firstAnswer.body === res.body)
}

function answers(intent: Intent): string {
  return intent.records
    .map((r) => (!r.sent ? 'not sent' : r.exchange?.response ? `${r.exchange.response.status}` : `no answer (${r.exchange?.error ?? '?'})`))
    .join(', ')
}
