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
const part = phrases('transition', { ...PARTS, named: '{state} · {request} → {answer}' })

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
function keyState(m: ModelState, r: Request): string {
  if (r.key === undefined) return 'no key'
  if (r.malformed) return 'malformed key'
  const scope = scopeOf(m, r)
  const row = m.keys.get(scope)
  if (!row) return 'unknown key'
  if (!liveRow(m, scope)) return 'expired key'
  if (row.status === 'completed') return 'completed'
  if (!m.promises.leases) return 'in progress'
  return m.now < row.leaseUntil ? 'in flight' : 'lease run out'
}

const answerOf = (allowed: Allowed): string => {
  switch (allowed.kind) {
    case 'executes':
      return allowed.outcome.status === 201 ? 'executes (201)' : 'executes, refused by the bank'
    case 'core-unavailable':
      return 'core fails (503)'
    default:
      return allowed.kind
  }
}

/** The transition a request answered as `allowed` takes, read from the model before its effect. */
export function transitionOf(m: ModelState, r: Request, allowed: Allowed): string {
  const state = keyState(m, r)
  const row = r.key === undefined ? undefined : m.keys.get(scopeOf(m, r))
  const body = state === 'no key' || state === 'malformed key' ? 'any body' : !row ? 'first' : row.fingerprint === r.fingerprint ? 'same body' : 'other body'
  return `${state} · ${body} → ${answerOf(allowed)}`
}

/** A request held in the core, then released (or failing there), as its claim then stands. */
export function heldTransitionOf(claim: 'holder' | 'lease run out' | 'superseded', how: 'released' | 'let go to fail', answer: Allowed | 'claim-lost'): string {
  return `held, ${claim === 'holder' ? 'holding its claim' : claim === 'superseded' ? 'superseded' : 'its lease run out'} · ${how} → ${answer === 'claim-lost' ? answer : answerOf(answer)}`
}

export const PURGE_TRANSITION = 'expired keys · a request past the purge interval → rows gone'

/** What a run of the histories can do: the alphabet's capabilities that open transitions. */
export type Reach = { clock: boolean; holdAlone: boolean; keyTable: boolean }

/**
 * Every transition of the contract of `p`, with why one cannot be reached by
 * this grade's histories (the alphabet lacks what it needs), if it cannot.
 */
export function transitionsOf(p: Promises, reach: Reach): Array<{ name: string; unreachable?: string }> {
  const executes = ['executes (201)', 'executes, refused by the bank', 'core fails (503)']
  const seen = p.replay ? 'replay' : 'already-processed'
  const rows: Array<[string, string, string, string?]> = [
    ['no key', 'any body', 'key-missing'],
    ['malformed key', 'any body', 'key-malformed'],
    ...executes.map((a): [string, string, string] => ['unknown key', 'first', a]),
    ['completed', 'same body', seen],
    ['completed', 'other body', p.fingerprint ? 'key-reused' : seen],
  ]
  if (p.leases) {
    rows.push(['in flight', 'same body', 'in-flight'], ['in flight', 'other body', 'key-reused'])
    const noClock = reach.clock ? undefined : String(why('leaseClock'))
    for (const a of executes) rows.push(['lease run out', 'same body', a, noClock])
    rows.push(['lease run out', 'other body', 'key-reused', noClock])
  } else {
    rows.push(['in progress', 'same body', 'already-processed'], ['in progress', 'other body', p.fingerprint ? 'key-reused' : 'already-processed'])
  }
  if (p.scopeAndTtl) {
    const noClock = reach.clock ? undefined : String(why('expiryClock'))
    for (const body of ['same body', 'other body']) for (const a of executes) rows.push(['expired key', body, a, noClock])
  }
  const named = rows.map(([state, body, answer, unreachable]) => ({ name: `${state} · ${body} → ${answer}`, ...(unreachable ? { unreachable } : {}) }))
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
