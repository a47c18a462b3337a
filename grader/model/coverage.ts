// The model's transitions, named: the state of a request's key as the
// contract sees it, what the request is to that key, and the answer the
// contract allows (grader/model/contract.ts's decide, and the held requests'
// settle in runHistory.ts). A grade counts the transitions its histories
// reach (`npm run grade -- N --coverage`), against every one the stage's
// contract has, so that "the histories explore" is a measured claim.
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { liveRow, scopeOf, type Allowed, type ModelState, type Promises, type Request } from './contract.ts'

// A transition's name is its English, the same in every result document
// (checks' coverage, --json): it is what the counts are keyed by. Its parts
// are templates the packs translate (i18n/<lang>.json, "messages":
// transition.<key>), so that transitionSaid says a name in the learner's
// language; the answers that are problem types (key-reused, replay, …) are
// the contract's words and stay as they are.
const PARTS = {
  noKey: 'no key',
  malformedKey: 'malformed key',
  unknownKey: 'unknown key',
  expiredKey: 'expired key',
  completed: 'completed',
  inProgress: 'in progress',
  inFlight: 'in flight',
  leaseRunOut: 'lease run out',
  anyBody: 'any body',
  first: 'first',
  sameBody: 'same body',
  otherBody: 'other body',
  executes: 'executes (201)',
  refusedByBank: 'executes, refused by the bank',
  coreFails: 'core fails (503)',
  heldHolding: 'held, holding its claim',
  heldSuperseded: 'held, superseded',
  heldRunOut: 'held, its lease run out',
  released: 'released',
  letGoToFail: 'let go to fail',
  expiredKeys: 'expired keys',
  pastPurge: 'a request past the purge interval',
  rowsGone: 'rows gone',
} as const
type Part = keyof typeof PARTS
const part = phrases('transition', { ...PARTS, named: '{state} · {request} → {answer}' })

/** A transition's name: its English, from its parts (a part, or an answer that is a problem type). */
const nameOf = (state: Part, request: Part, answer: Part | string): string =>
  String(part('named', { state: PARTS[state], request: PARTS[request], answer: Object.hasOwn(PARTS, answer) ? PARTS[answer as Part] : answer }))

/** Why a transition cannot be reached by a grade's histories, as templates (stored in English, like the names). */
const why = phrases('unreachable', {
  leaseClock: 'a lease runs out only on a clock the grader moves',
  expiryClock: 'a key expires only on a clock the grader moves',
  holdAlone: 'one request is held apart from the others only with PUT /admin/core {"holdNext"}',
  takeoverClock: 'a claim is taken over only once its lease runs out, on a clock the grader moves',
  keyTable: 'the key table is read only where the grade reads the database, on a clock it moves',
})

const partSaid = (english: string): Line => {
  const key = (Object.keys(PARTS) as Array<keyof typeof PARTS>).find((k) => PARTS[k] === english)
  return key ? part(key) : english
}

/** A transition's name (transitionOf, heldTransitionOf, PURGE_TRANSITION) in the learner's language; a name it does not know stays as it is. */
export function transitionSaid(name: string): Line {
  const m = /^(.*) · (.*) → (.*)$/.exec(name)
  return m ? part('named', { state: partSaid(m[1]!), request: partSaid(m[2]!), answer: partSaid(m[3]!) }) : name
}

/** Why a transition is unreachable (as transitionsOf stores it) in the learner's language. */
export function unreachableSaid(text: string): Line {
  const key = (['leaseClock', 'expiryClock', 'holdAlone', 'takeoverClock', 'keyTable'] as const).find((k) => String(why(k)) === text)
  return key ? why(key) : text
}

/** The state of `r`'s key before it is answered. */
function keyState(m: ModelState, r: Request): Part {
  if (r.key === undefined) return 'noKey'
  if (r.malformed) return 'malformedKey'
  const scope = scopeOf(m, r)
  const row = m.keys.get(scope)
  if (!row) return 'unknownKey'
  if (!liveRow(m, scope)) return 'expiredKey'
  if (row.status === 'completed') return 'completed'
  if (!m.promises.leases) return 'inProgress'
  return m.now < row.leaseUntil ? 'inFlight' : 'leaseRunOut'
}

/** The answer a transition ends in: a part, or the problem type the contract names. */
const answerOf = (allowed: Allowed): Part | string => {
  switch (allowed.kind) {
    case 'executes':
      return allowed.outcome.status === 201 ? 'executes' : 'refusedByBank'
    case 'core-unavailable':
      return 'coreFails'
    default:
      return allowed.kind
  }
}

/** The transition a request answered as `allowed` takes, read from the model before its effect. */
export function transitionOf(m: ModelState, r: Request, allowed: Allowed): string {
  const state = keyState(m, r)
  const row = r.key === undefined ? undefined : m.keys.get(scopeOf(m, r))
  const body: Part = state === 'noKey' || state === 'malformedKey' ? 'anyBody' : !row ? 'first' : row.fingerprint === r.fingerprint ? 'sameBody' : 'otherBody'
  return nameOf(state, body, answerOf(allowed))
}

const HELD = { holder: 'heldHolding', superseded: 'heldSuperseded', 'lease run out': 'heldRunOut' } as const
const HOW = { released: 'released', 'let go to fail': 'letGoToFail' } as const

/** A request held in the core, then released (or failing there), as its claim then stands. */
export function heldTransitionOf(claim: keyof typeof HELD, how: keyof typeof HOW, answer: Allowed | 'claim-lost'): string {
  return nameOf(HELD[claim], HOW[how], answer === 'claim-lost' ? answer : answerOf(answer))
}

export const PURGE_TRANSITION = nameOf('expiredKeys', 'pastPurge', 'rowsGone')

/** What a run of the histories can do: the alphabet's capabilities that open transitions. */
export type Reach = { clock: boolean; holdAlone: boolean; keyTable: boolean }

/**
 * Every transition of the contract of `p`, with why one cannot be reached by
 * this grade's histories (the alphabet lacks what it needs), if it cannot.
 */
export function transitionsOf(p: Promises, reach: Reach): Array<{ name: string; unreachable?: string }> {
  const executes: Part[] = ['executes', 'refusedByBank', 'coreFails']
  const seen = p.replay ? 'replay' : 'already-processed'
  const rows: Array<[Part, Part, Part | string, string?]> = [
    ['noKey', 'anyBody', 'key-missing'],
    ['malformedKey', 'anyBody', 'key-malformed'],
    ...executes.map((a): [Part, Part, Part] => ['unknownKey', 'first', a]),
    ['completed', 'sameBody', seen],
    ['completed', 'otherBody', p.fingerprint ? 'key-reused' : seen],
  ]
  if (p.leases) {
    rows.push(['inFlight', 'sameBody', 'in-flight'], ['inFlight', 'otherBody', 'key-reused'])
    const noClock = reach.clock ? undefined : String(why('leaseClock'))
    for (const a of executes) rows.push(['leaseRunOut', 'sameBody', a, noClock])
    rows.push(['leaseRunOut', 'otherBody', 'key-reused', noClock])
  } else {
    rows.push(['inProgress', 'sameBody', 'already-processed'], ['inProgress', 'otherBody', p.fingerprint ? 'key-reused' : 'already-processed'])
  }
  if (p.scopeAndTtl) {
    const noClock = reach.clock ? undefined : String(why('expiryClock'))
    for (const body of ['sameBody', 'otherBody'] as const) for (const a of executes) rows.push(['expiredKey', body, a, noClock])
  }
  const named = rows.map(([state, body, answer, unreachable]) => ({ name: nameOf(state, body, answer), ...(unreachable ? { unreachable } : {}) }))
  const held = [
    { name: heldTransitionOf('holder', 'released', { kind: 'executes', outcome: { status: 201, to: '', amount: 0, balanceAfter: 0 } }) },
    { name: heldTransitionOf('holder', 'released', { kind: 'executes', outcome: { status: 402, type: '' } }) },
  ]
  const alone = reach.holdAlone ? undefined : String(why('holdAlone'))
  held.push({ name: heldTransitionOf('holder', 'let go to fail', { kind: 'core-unavailable' }), ...(alone ? { unreachable: alone } : {}) })
  if (p.leases) {
    const takeover = !reach.clock ? String(why('takeoverClock')) : alone
    const noClock = reach.clock ? undefined : String(why('leaseClock'))
    held.push(
      {
        name: heldTransitionOf('lease run out', 'released', { kind: 'executes', outcome: { status: 201, to: '', amount: 0, balanceAfter: 0 } }),
        ...(noClock ? { unreachable: noClock } : {}),
      },
      {
        name: heldTransitionOf('lease run out', 'released', { kind: 'executes', outcome: { status: 402, type: '' } }),
        ...(noClock ? { unreachable: noClock } : {}),
      },
      {
        name: heldTransitionOf('lease run out', 'let go to fail', { kind: 'core-unavailable' }),
        ...(noClock || alone ? { unreachable: (noClock ?? alone)! } : {}),
      },
      { name: heldTransitionOf('superseded', 'released', 'claim-lost'), ...(!reach.clock ? { unreachable: takeover! } : {}) },
      { name: heldTransitionOf('superseded', 'let go to fail', { kind: 'core-unavailable' }), ...(takeover ? { unreachable: takeover } : {}) },
    )
  }
  const purge = p.scopeAndTtl
    ? [
        {
          name: PURGE_TRANSITION,
          ...(!reach.clock || !reach.keyTable ? { unreachable: String(why('keyTable')) } : {}),
        },
      ]
    : []
  return [...named, ...held, ...purge]
}
