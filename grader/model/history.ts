// The alphabet of a history: the operations a client, the core, the clock and
// the operator can perform, as plain data fast-check can generate and shrink.
//
// Operations name slots, not values: "key 1", "intent 2", "client 0". The
// slots are resolved to real keys, accounts and bodies when a history runs,
// so a shrunk history (a step removed, a choice made simpler) still means
// something, and each run starts from fresh accounts.
import fc from 'fast-check'
import { phrases } from '#harness/i18n/phrase.ts'

/** Headers a client's library, a proxy or a cache adds: none of them may change what the bank does. */
export const LIBRARY_HEADERS = {
  'User-Agent': 'okhttp/4.12.0',
  'X-Request-Id': 'req-7f3a',
  'X-Cache': 'HIT',
  'X-Hit': 'true',
  Prefer: 'return=minimal',
  'Idempotent-Replayed': 'true',
} as const

export type LibraryHeader = keyof typeof LIBRARY_HEADERS

// What makes a quoted key no plain String, as the checks tell a learner (i18n/<lang>.json, "messages": keyMalformation.<key>).
const malformation = phrases('keyMalformation', {
  unterminated: 'without its closing quote',
  badEscape: 'with an escape other than \\" and \\\\ (\\q)',
  parameter: 'with a parameter after it (;v=1)',
})

/**
 * Quoted keys RFC 8941 cannot parse, or with a parameter (CONTRACT.md, The
 * header): each is 400 idempotency-key-malformed. `write` makes the header
 * value from a key; `what` says what makes it no plain String.
 */
export const KEY_MALFORMATIONS = {
  unterminated: { write: (key: string) => `"${key}`, what: malformation('unterminated') },
  'bad escape': { write: (key: string) => `"${key}\\q"`, what: malformation('badEscape') },
  parameter: { write: (key: string) => `"${key}";v=1`, what: malformation('parameter') },
} as const
export type KeyMalformation = keyof typeof KEY_MALFORMATIONS

/** How a request's body differs from its intent's: nothing, the text only, or one field (every field in turn). */
export type BodyChange = 'same' | 'reserialized' | 'amount' | 'from' | 'to' | 'memo' | 'metadata' | 'json-type' | 'array-order' | 'removed'

/** The body changes that make another request: one field each, every kind of JSON difference RFC 8785 keeps. */
export const FIELD_CHANGES = ['amount', 'from', 'to', 'memo', 'metadata', 'json-type', 'array-order', 'removed'] as const satisfies readonly BodyChange[]

export type SendOp = {
  op: 'send'
  /** Which instance receives it (stage 6 runs three, their clocks skewed). */
  instance: number
  client: 0 | 1
  /** A key slot, or none: the header left out. */
  key: 0 | 1 | 'none'
  /** The key sent as a quoted sf-string rather than bare. */
  quoted: boolean
  /**
   * How the key is written besides: as it is; upper-cased (keys are
   * case-sensitive: another key); or a quoted form RFC 8941 refuses
   * (unterminated, a bad escape, a parameter), which is 400 malformed.
   */
  form: 'as-is' | 'upper-case' | KeyMalformation
  intent: 0 | 1
  change: BodyChange
  /** One of the spellings Express routes to the intent's route (SPELLINGS in runHistory.ts). */
  spelling: number
  /**
   * Headers a client library, a proxy or a cache adds, which mean nothing to
   * the bank (LIBRARY_HEADERS): a subset, so that shrinking keeps only the
   * one a layer wrongly reads.
   */
  extraHeaders: LibraryHeader[]
  /** The instance dies right after this request's money commits, before it answers (a fault point of the bank). */
  crashAfterCommit: boolean
  /**
   * Its core call is held alone, until a `let-go` step: other requests on the
   * instance go through meanwhile (a takeover of its key, say).
   */
  holdAlone: boolean
}

export type Op =
  | SendOp
  /** The core holds every call of this instance until released: requests that execute wait there. */
  | { op: 'hold'; instance: number }
  | { op: 'release'; instance: number }
  /** The oldest request held alone with this key slot (or else the oldest held alone) goes on: into the core, or failing there. */
  | { op: 'let-go'; key: 0 | 1; fails: boolean }
  /** The core's next call on this instance fails (503, nothing moves). */
  | { op: 'core-fails'; instance: number }
  /** A deposit to the client's first account, or a transfer of its whole balance to its second, each with a key of its own. */
  | { op: 'top-up'; client: 0 | 1 }
  | { op: 'drain'; client: 0 | 1 }
  /** The grader's clock moves to a boundary of a key slot's lease or TTL, or a second on. */
  | {
      op: 'clock'
      to: 'lease-last' | 'lease-end' | 'ttl-last' | 'ttl-end' | 'second'
      key: 0 | 1
      /** Whose use of the key (stage 5 scopes keys by client and route): by default the first row that holds the key. */
      of?: { client: 0 | 1; intent: 0 | 1 }
    }
  /** SIGKILL, then a restart on the same database. */
  | { op: 'crash'; instance: number }

/** A concrete intent: one transfer or deposit a client means to make once. */
export type IntentSpec = {
  route: 'transfers' | 'deposits'
  /** The owner of the debited account (transfers) or the credited one (deposits). */
  owner: 0 | 1
  /** Which of the accounts receives it: the other client's, the owner's second, or one that does not exist. */
  to: 'other-client' | 'own' | 'missing'
  /** Small amounts usually clear; large ones can exceed a balance (402). */
  amount: number
  memo: string | undefined
  metadata: Record<string, unknown> | undefined
}

export type History = { intents: [IntentSpec, IntentSpec]; ops: Op[] }

export type Alphabet = {
  instances: number
  /** The clock can be moved (a controlled grade clock). */
  clock: boolean
  /** Keys expire (stage 5): TTL boundaries are worth aiming at. */
  ttl: boolean
  /** The bank offers the crash-after-commit fault point. */
  faultPoint: boolean
  /** The bank's core can hold one call alone and let it go later (PUT /admin/core {"holdNext", "letGo"}). */
  holdAlone: boolean
}

/** Two keys and two intents: few enough that a history comes back to the same one, which is where the combinations are. */
const slot = fc.constantFrom<0 | 1>(0, 1)
const client = fc.constantFrom<0 | 1>(0, 1)

const smallAmount = fc.integer({ min: 1, max: 200 }).map((n) => n * 100)
/** Any whole won, 1 included: an amount need not be a round one. */
const anyWon = fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 20_000 }))

const intent: fc.Arbitrary<IntentSpec> = fc.record({
  route: fc.constantFrom<'transfers' | 'deposits'>('transfers', 'deposits'),
  owner: client,
  to: fc.constantFrom<IntentSpec['to']>('other-client', 'other-client', 'own', 'missing'),
  amount: fc.oneof(
    smallAmount,
    fc.integer({ min: 200, max: 900 }).map((n) => n * 100),
    anyWon,
  ),
  // The memo's edges: empty, the 140-character limit, what JSON escapes, a combining accent (café in NFD: another text than NFC's).
  memo: fc.option(fc.constantFrom('rent', 'dinner 🍜', 'café', 'invoice #12', '', 'x'.repeat(140), 'say "hi"\\\n', 'cafe\u0301'), { nil: undefined }),
  metadata: fc.option(
    fc.constantFrom<Record<string, unknown>>(
      { approved: false },
      { approved: true, by: 'ops' },
      { ref: '5', tags: ['a'] },
      { note: null },
      { tags: ['a', 'b'] },
      {},
    ),
    { nil: undefined },
  ),
})

/**
 * An intent of client 0 that executes when first sent (an account that
 * exists, an amount its opening balance covers): a tour's motif is about the
 * key, and a first request refused by the bank would leave it nothing to test.
 */
const executingIntent: fc.Arbitrary<IntentSpec> = intent.chain((i) =>
  fc
    // A deposit goes to an account of the depositor's own: one to another client's is refused (403).
    .record({
      to: fc.constantFrom<IntentSpec['to']>(...(i.route === 'deposits' ? (['own'] as const) : (['other-client', 'own'] as const))),
      // At most 9,000 of the opening 40,000: a motif that executes it four times (under another key, past its TTL, amended by 100) still executes.
      amount: fc.integer({ min: 1, max: 90 }).map((n) => n * 100),
    })
    .map((r) => ({ ...i, owner: 0 as const, ...r })),
)

/**
 * An intent of client 0 that the bank refuses when first sent: a transfer
 * over any balance a history can hold (100,100 won or more: 402), or money for an account that does
 * not exist (404). What the layer keeps for a refused request is the other
 * half of each motif (stage 4 replays it; a takeover re-runs it).
 */
const refusedIntent: fc.Arbitrary<IntentSpec> = intent.chain((i) =>
  fc
    .oneof(
      fc.record({
        route: fc.constant('transfers' as const),
        to: fc.constantFrom<IntentSpec['to']>('other-client', 'own'),
        amount: fc.integer({ min: 1_001, max: 9_000 }).map((n) => n * 100),
      }),
      fc.record({ route: fc.constant(i.route), to: fc.constant<IntentSpec['to']>('missing'), amount: smallAmount }),
    )
    .map((r) => ({ ...i, owner: 0 as const, ...r })),
)

function sendOp(a: Alphabet): fc.Arbitrary<SendOp> {
  return fc.record({
    op: fc.constant('send' as const),
    instance: fc.integer({ min: 0, max: a.instances - 1 }),
    client: fc.oneof({ weight: 4, arbitrary: fc.constant<0 | 1>(0) }, { weight: 1, arbitrary: fc.constant<0 | 1>(1) }),
    key: fc.oneof({ weight: 12, arbitrary: slot }, { weight: 1, arbitrary: fc.constant('none' as const) }),
    quoted: fc.boolean(),
    form: fc.oneof(
      { weight: 20, arbitrary: fc.constant('as-is' as const) },
      { weight: 1, arbitrary: fc.constant('upper-case' as const) },
      { weight: 1, arbitrary: fc.constantFrom(...(Object.keys(KEY_MALFORMATIONS) as KeyMalformation[])) },
    ),
    intent: slot,
    change: fc.oneof(
      { weight: 5, arbitrary: fc.constant<BodyChange>('same') },
      { weight: 2, arbitrary: fc.constant<BodyChange>('reserialized') },
      { weight: 4, arbitrary: fc.constantFrom<BodyChange>(...FIELD_CHANGES) },
    ),
    spelling: fc.integer({ min: 0, max: SPELLING_COUNT - 1 }),
    // One send in two carries some; the flag shrinks to none, the subset to the one header that matters.
    extraHeaders: fc
      .tuple(fc.boolean(), fc.subarray(Object.keys(LIBRARY_HEADERS) as LibraryHeader[], { minLength: 1 }))
      .map(([sent, headers]) => (sent ? headers : [])),
    // Armed by a motif only (motif() below), where a retry of the same key follows.
    crashAfterCommit: fc.constant(false),
    holdAlone: a.holdAlone ? fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }) : fc.constant(false),
  })
}

/** The events a motif puts between a key's first request and its retries. */
export type MotifKind =
  | 'clock'
  | 'top-up'
  | 'header-forms'
  | 'first-fails'
  | 'crash'
  | 'crash-after-commit'
  | 'hold'
  | 'held-fails'
  | 'lapsed-release'
  | 'lapsed-fails'
  | 'superseded'
  | 'superseded-fails'
  | 'two-takeovers'
  | 'takeover-fails'
  | 'expired-fails'
  | 'purged-by-another'
  | 'purge-while-held'

/**
 * The motifs an alphabet can build, each once: a grade runs one history of
 * each before the random ones. A takeover needs the lease to run out while
 * the original is held alone: a clock the grader moves, and a core that holds
 * one call.
 */
export function motifKinds(a: Alphabet): MotifKind[] {
  const takeovers: MotifKind[] = a.clock && a.holdAlone ? ['superseded', 'superseded-fails', 'two-takeovers', 'takeover-fails'] : []
  const expiry: MotifKind[] = a.clock && a.ttl ? ['expired-fails', 'purged-by-another', ...(a.holdAlone ? (['purge-while-held'] as const) : [])] : []
  return [
    ...(a.clock ? (['clock'] as const) : []),
    'top-up',
    'header-forms',
    'first-fails',
    'crash',
    'crash-after-commit',
    'hold',
    ...(a.holdAlone ? (['held-fails'] as const) : []),
    ...(a.clock ? (['lapsed-release'] as const) : []),
    ...(a.clock && a.holdAlone ? (['lapsed-fails'] as const) : []),
    ...takeovers,
    ...expiry,
  ]
}

/** One history of the tour: a motif, and whether its first request executes or the bank refuses it. */
export type TourStop = { motif: MotifKind; first: 'executes' | 'refused' }

/**
 * The motifs whose transitions differ when the first request is refused by
 * the bank: what a held, lapsed, superseded or expired request answers when
 * it is let go or run again is then a refusal, which a layer may keep wrong.
 */
const REFUSED_TOO: readonly MotifKind[] = ['clock', 'hold', 'lapsed-release', 'superseded']

/**
 * The tour a grade runs before its random histories: one history of each
 * motif, and a second with a refused first request where that opens other
 * transitions. Together they reach every transition the alphabet can
 * (test/model.test.ts and the coverage table hold that).
 */
export function tourOf(a: Alphabet): TourStop[] {
  return motifKinds(a).flatMap((motif): TourStop[] => [
    { motif, first: 'executes' },
    ...(REFUSED_TOO.includes(motif) ? [{ motif, first: 'refused' } as const] : []),
  ])
}

/**
 * Random histories over the alphabet; with `stop`, every history is built
 * around that one motif, its first request executing or refused as the stop
 * says, so that a grade meets each motif whatever its seed.
 */
export function historyArbitrary(a: Alphabet, maxSteps: number, stop?: TourStop): fc.Arbitrary<History> {
  const only = stop?.motif
  const instance = fc.integer({ min: 0, max: a.instances - 1 })
  const ops: Array<fc.WeightedArbitrary<Op>> = [
    { weight: 20, arbitrary: sendOp(a) },
    { weight: 4, arbitrary: fc.record({ op: fc.constant('hold' as const), instance }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('release' as const), instance }) },
    ...(a.holdAlone ? [{ weight: 3, arbitrary: fc.record({ op: fc.constant('let-go' as const), key: slot, fails: fc.boolean() }) }] : []),
    { weight: 2, arbitrary: fc.record({ op: fc.constant('core-fails' as const), instance }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('top-up' as const), client }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('drain' as const), client }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('crash' as const), instance }) },
  ]
  if (a.clock) {
    const targets = a.ttl
      ? (['lease-last', 'lease-end', 'ttl-last', 'ttl-end', 'ttl-end', 'second'] as const)
      : (['lease-last', 'lease-end', 'lease-end', 'second'] as const)
    ops.push({ weight: 5, arbitrary: fc.record({ op: fc.constant('clock' as const), to: fc.constantFrom(...targets), key: slot }) })
  }
  const random = fc.array(fc.oneof(...ops), { minLength: 1, maxLength: maxSteps })
  // Two histories in three are random steps around one motif: the few steps on one
  // key that make a combination (a boundary crossed, then a second change),
  // which uniform steps would meet too rarely.
  const aroundMotif = fc
    // A tour's history is its motif alone: a random step after it could undo what it set up (a request of client A
    // purges A's own expired keys before the end reads what the other client's purge left).
    .tuple(fc.array(fc.oneof(...ops), { maxLength: only ? 0 : 3 }), motif(a, stop), fc.array(fc.oneof(...ops), { maxLength: only ? 0 : 3 }))
    .map(([before, steps, after]) => [...before, ...steps, ...after])
  const intents = !stop ? intent : stop.first === 'executes' ? executingIntent : refusedIntent
  return fc.record({
    intents: fc.tuple(intents, intents),
    ops: (only ? aroundMotif : fc.oneof({ weight: 1, arbitrary: random }, { weight: 2, arbitrary: aroundMotif })).map(oneCrashAtMost),
  })
}

/**
 * Steps on one key and one intent that cross a boundary and then change
 * something: a retry on each side of a lease's or TTL's end (the first
 * moves the purge along, so the second sees a row that expired but is not
 * purged yet), a retry after the balance moved, after a crash (in flight, or
 * after the commit, the answer lost), while in flight.
 */
function motif(a: Alphabet, stop: TourStop | undefined): fc.Arbitrary<Op[]> {
  const only = stop?.motif
  // A tour's sends are never held alone unless its motif says so: a held one would answer nothing.
  const tourSend = sendOp(a).map((op): SendOp => ({ ...op, holdAlone: false }))
  // Every motif the alphabet can build; the two that most often find a flaw are drawn twice as often.
  const kinds = motifKinds(a).flatMap((kind) => (kind === 'clock' || kind === 'crash-after-commit' ? [kind, kind] : [kind]))
  return fc
    .record({
      // A tour's motif starts with client 0 sending its intent as it is, under a key it can use, and not held
      // alone unless the motif says so, so that the first request executes (or is refused, as the stop says).
      first: only
        ? tourSend.map(
            (op): SendOp => ({
              ...op,
              client: 0,
              key: op.key === 'none' ? 0 : op.key,
              form: 'as-is',
              change: op.change === 'reserialized' ? op.change : 'same',
            }),
          )
        : sendOp(a),
      retry: only ? tourSend : sendOp(a),
      last: only ? tourSend : sendOp(a),
      // The tour's clock history crosses a TTL where keys expire: the retry at its last millisecond sets the purge's
      // clock, so the other body at its first meets the expired row still there (random histories cross leases too).
      ends: fc.constantFrom<'lease' | 'ttl'>(
        ...(a.ttl ? (only === 'clock' ? (['ttl'] as const) : (['lease', 'ttl', 'ttl', 'ttl'] as const)) : (['lease'] as const)),
      ),
      between: only ? fc.constant(only) : fc.constantFrom(...kinds),
      malformation: fc.constantFrom(...(Object.keys(KEY_MALFORMATIONS) as KeyMalformation[])),
      // A tour stop's other body fares as its first request did: its accounts are left as they are (another
      // account may be another client's, 403, or an existing one in place of the missing one, which executes).
      field: fc.constantFrom<BodyChange>(...FIELD_CHANGES.filter((f) => !stop || (f !== 'from' && f !== 'to'))),
    })
    .map(({ first, retry, last, ends, between, malformation, field }): Op[] => {
      const key = first.key === 'none' ? 0 : first.key
      const same = { key, intent: first.intent, client: first.client }
      // Every step of a motif names its key as the first did: the motif is about that key.
      const again = (op: SendOp): SendOp => ({ ...op, ...same, form: first.form, crashAfterCommit: false })
      // The retry right after the event is the same request as the first (perhaps re-serialized): what a client resends.
      const sameBody: SendOp = { ...retry, change: isFieldChange(first.change) ? first.change : retry.change === 'reserialized' ? 'reserialized' : 'same' }
      // The intent's other key: a motif that needs two keys of one intent uses both.
      const otherKey = { ...same, key: key === 0 ? (1 as const) : (0 as const) }
      // The first request held alone past its lease, `before` and then `takeover` sent, the original let go (to go
      // on, or to fail in the core), and `retry`: the shape of every motif whose original is superseded.
      const overtaken = (before: Op[], takeover: SendOp, fails: boolean, retry: SendOp): Op[] => [
        { ...first, holdAlone: true },
        { op: 'clock', to: 'lease-end', key, of: same },
        ...before,
        takeover,
        { op: 'let-go', key, fails },
        retry,
      ]
      switch (between) {
        case 'clock':
          if (ends === 'ttl')
            // Two keys of one intent expire together; at the first moment past the TTL one is sent with
            // another body, then the other with the same: each is a new execution, neither a replay nor a 422.
            // The other body goes first: a layer that forgets an expired key only once it has read that key's
            // body (and purges every expired row as it does) would otherwise be shown the same body first.
            return [
              first,
              { ...first, ...otherKey, holdAlone: false },
              { op: 'clock', to: 'ttl-last', key, of: same },
              again(sameBody),
              { op: 'clock', to: 'ttl-end', key, of: same },
              { ...again({ ...last, change: field }), ...otherKey },
              again(sameBody),
            ]
          return [
            first,
            { op: 'clock', to: `${ends}-last`, key, of: same },
            again(sameBody),
            { op: 'clock', to: `${ends}-end`, key, of: same },
            // The second change: another body, the first moment past the boundary.
            again({ ...last, change: field }),
          ]
        case 'top-up':
          return [first, { op: 'top-up', client: first.client }, again(sameBody), { op: 'drain', client: first.client }, again(last)]
        case 'header-forms':
          // The request without its key, then with a key RFC 8941 cannot parse: each is 400 and moves nothing, so the
          // request with its key as it is then executes, once.
          return [
            { ...first, key: 'none', holdAlone: false },
            { ...first, form: malformation, holdAlone: false },
            { ...first, holdAlone: false },
            again(sameBody),
          ]
        case 'first-fails':
          // The first attempt fails in the core: nothing moved and nothing is kept, so its retry executes.
          return [
            { op: 'core-fails', instance: first.instance },
            { ...first, holdAlone: false },
            again({ ...sameBody, instance: first.instance, holdAlone: false }),
          ]
        case 'crash':
          return [
            { op: 'hold', instance: first.instance },
            first,
            { op: 'crash', instance: first.instance },
            again(sameBody),
            ...(a.clock ? [{ op: 'clock', to: 'lease-end', key, of: same } as const] : []),
            again(last),
          ]
        case 'crash-after-commit':
          // Without the fault point the first send is an ordinary one: the motif is then a plain retry.
          return [
            { ...first, crashAfterCommit: a.faultPoint },
            again(sameBody),
            ...(a.clock ? [{ op: 'clock', to: 'lease-end', key, of: same } as const] : []),
            again(last),
          ]
        case 'hold':
          // While the first is in flight, a duplicate of it and a request with another body under its key.
          return [
            { op: 'hold', instance: first.instance },
            first,
            again({ ...sameBody, instance: duplicateInstance(a, first.instance) }),
            again({ ...last, change: field, instance: duplicateInstance(a, first.instance) }),
            { op: 'release', instance: first.instance },
            again(last),
          ]
        case 'held-fails':
          // The request in flight fails in the core: its duplicate meanwhile is refused, its retry afterwards executes.
          return [
            { ...first, holdAlone: true },
            again({ ...sameBody, holdAlone: false, instance: duplicateInstance(a, first.instance) }),
            { op: 'let-go', key, fails: true },
            again({ ...last, holdAlone: false }),
          ]
        case 'lapsed-release':
          // Held past its lease, and nobody took it over: the owner still completes (or is told its claim is lost).
          return [
            { op: 'hold', instance: first.instance },
            first,
            { op: 'clock', to: 'lease-end', key, of: same },
            { op: 'release', instance: first.instance },
            again(last),
          ]
        case 'lapsed-fails':
          // Held alone past its lease, nobody took it over, and its core call fails: its claim is released, and the retry executes.
          return [
            { ...first, holdAlone: true },
            { op: 'clock', to: 'lease-end', key, of: same },
            { op: 'let-go', key, fails: true },
            again({ ...last, holdAlone: false }),
          ]
        case 'takeover-fails': {
          // The takeover's own core call fails: it releases its claim only; the superseded original, let go, must not complete.
          const at = duplicateInstance(a, first.instance)
          return overtaken([{ op: 'core-fails', instance: at }], again({ ...sameBody, holdAlone: false, instance: at }), false, again(last))
        }
        case 'expired-fails': {
          // Two keys expire together; past their TTL, the core fails the first request of each (the same body, another one): each is released, and the next executes.
          return [
            { ...first, holdAlone: false },
            { ...first, ...otherKey, holdAlone: false },
            { op: 'clock', to: 'ttl-end', key, of: same },
            { op: 'core-fails', instance: first.instance },
            again({ ...sameBody, instance: first.instance, holdAlone: false }),
            { op: 'core-fails', instance: first.instance },
            { ...again({ ...last, change: field, instance: first.instance, holdAlone: false }), ...otherKey },
            again(last),
          ]
        }
        case 'purged-by-another':
          // The key expires, and the next request is the other client's: its purge must delete every client's
          // expired keys, which the end of the history reads in the key table.
          return [
            { ...first, holdAlone: false },
            { op: 'clock', to: 'ttl-end', key, of: same },
            { op: 'top-up', client: first.client === 0 ? 1 : 0 },
          ]
        case 'purge-while-held':
          // A claim is held alone while its key's TTL passes, beside another key of the intent that completed; the other
          // client's request then purges. A duplicate meets the claim: in flight while its lease lasts (a purge spares a
          // live claim, even one that outlived its key), else it executes anew; then the original is let go.
          return [
            { ...first, ...otherKey, holdAlone: false },
            { ...first, holdAlone: true },
            { op: 'clock', to: 'ttl-end', key, of: same },
            { op: 'top-up', client: first.client === 0 ? 1 : 0 },
            again({ ...sameBody, holdAlone: false, instance: duplicateInstance(a, first.instance) }),
            { op: 'let-go', key, fails: false },
            again(last),
          ]
        case 'superseded':
        case 'superseded-fails': {
          // The original waits in the core past its lease; a retry takes the claim over and completes;
          // then the original goes on (or fails there): it must not complete, nor free the takeover's key.
          // Past the lease, another body under the key is still refused: the lease ran out, the key did not.
          const takeover = again({ ...sameBody, holdAlone: false, instance: duplicateInstance(a, first.instance) })
          return overtaken(
            [again({ ...last, change: field, holdAlone: false, instance: takeover.instance })],
            takeover,
            between === 'superseded-fails',
            // On stage 6 the last retry goes through the third instance: the takeover's answer is the database's, not one process's.
            again({ ...last, instance: a.instances < 3 ? last.instance : 3 - first.instance - takeover.instance }),
          )
        }
        case 'two-takeovers':
          // The first takeover is held alone too, its new lease refuses a duplicate, and it is superseded
          // in turn: two owners lose the claim, one completes.
          return [
            { ...first, holdAlone: true },
            { op: 'clock', to: 'lease-end', key, of: same },
            again({ ...sameBody, holdAlone: true }),
            again({ ...sameBody, holdAlone: false }),
            { op: 'clock', to: 'lease-end', key, of: same },
            again({ ...sameBody, holdAlone: false }),
            { op: 'let-go', key, fails: false },
            { op: 'let-go', key, fails: last.quoted },
            again(last),
          ]
      }
    })
}

const isFieldChange = (change: BodyChange) => change !== 'same' && change !== 'reserialized'

/** How many spellings of each route the histories send (runHistory.ts's SPELLINGS). */
export const SPELLING_COUNT = 5

/**
 * On stage 6 the duplicate of a held request goes through another instance
 * whose clock is skewed (1 or 2; instance 0 keeps the timeline's time): in
 * flight, and the lease left, are decided by the database, not by who holds
 * the request nor by the clock of who answers.
 */
function duplicateInstance(a: Alphabet, holder: number): number {
  if (a.instances < 3) return holder
  return holder === 1 ? 2 : 1
}

/**
 * A restart costs a second or more, the rest of a history milliseconds: a
 * history keeps its first crash (a SIGKILL, or one after a commit) and drops
 * the others, so the default count stays within a few seconds.
 */
function oneCrashAtMost(ops: Op[]): Op[] {
  let crashed = false
  return ops.flatMap((op): Op[] => {
    const crash = op.op === 'crash' || (op.op === 'send' && op.crashAfterCommit)
    if (!crash) return [op]
    if (crashed) return op.op === 'send' ? [{ ...op, crashAfterCommit: false }] : []
    crashed = true
    return [op]
  })
}
