// Runs one history against the learner's server and judges every answer, and
// the ledger after every step, against the contract's model (contract.ts).
//
// Each run opens fresh clients and accounts, so runs on one server never see
// each other's keys or money; the clock only moves forward, which the model
// reads before each step. A run stops at the first step whose answer or ledger
// left what the model allows, and returns the steps up to it: the timeline a
// failure shows (timeline.ts).
import canonicalize from 'canonicalize'
import { parseDictionary } from 'structured-headers'
import type { BankClient, Customer, Ledger } from '#harness/bankClient.ts'
import type { GradeClock } from '#harness/gradeClock.ts'
import { Reply, type Exchange, type RequestSpec } from '#harness/http.ts'
import { Rng } from '#harness/rng.ts'
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import { courseRuleLabel, type CourseRule } from '../engine/courseRule.ts'
import { serialize } from '../checks/jsonVariants.ts'
import {
  bankOutcome,
  boundariesOf,
  keyOfScope,
  purgeable,
  purgeIntervalMs,
  claim,
  cloneModel,
  complete,
  decide,
  holdsClaim,
  learnStored,
  newModel,
  release,
  requiredHeaders,
  scopeOf,
  candidateStages,
  type Allowed,
  type BankOutcome,
  type ModelState,
  type Periods,
  type Request,
  type StoredAnswer,
} from './contract.ts'
import { heldTransitionOf, PURGE_TRANSITION, transitionOf } from './coverage.ts'
import { KEY_MALFORMATIONS, LIBRARY_HEADERS, type History, type IntentSpec, type KeyMalformation, type Op, type SendOp } from './history.ts'

/** One step as it happened: what was done, what came back, what moved. */
export type Step = {
  index: number
  instance: number | undefined
  /** The key slot's label (k0, k1), a fresh key's, or none. */
  key: string | undefined
  what: Line
  answer: Line
  clock?: Line
  ledger?: string
  exchange?: Exchange
  /** The operation, as generated: what a replay of the step does (a request, or an admin call to the core or the clock). */
  op?: Op
  /** The grade clock (ms since the epoch) once the step was done. */
  at?: number
}

/** A history's two clients as the server knows them: what a replay needs to recreate them. */
export type Party = { label: 'A' | 'B'; name: string; apiKey: string; accounts: [string, string]; openingBalance: number }

export type Mismatch = { step: number; expected: Line; got: Line; rule?: CourseRule; exchange?: Exchange }

/**
 * `mismatch`: the first answer or ledger the contract does not allow (the run
 * stops there). `convention`: the first answer that kept the contract but
 * missed a course rule; the run goes on under the contract alone, so that a
 * layer's real flaws are still found behind a house rule it does not follow.
 */
export type HistoryRun = {
  steps: Step[]
  mismatch?: Mismatch
  convention?: Mismatch
  parties?: Party[]
  /** The model's transitions the run took (coverage.ts), each once. */
  transitions?: string[]
}

/** A server of the history: its client, and how to crash and restart it. */
/** A server the history runs on, and its label (its English is how the page and the replay name it). */
export type Instance = { bank: BankClient; label: Line }

export type HistoryEnv = {
  stage: number
  instances: Instance[]
  clock: GradeClock
  periods: Periods
  /** The bank offers PUT /admin/core {"crashAfterCommit": true}. */
  faultPoint: boolean
  /** The bank offers PUT /admin/core {"holdNext", "letGo"}: one call held alone. */
  holdAlone: boolean
  /**
   * The layer's rows holding a text, per table (layerRows.ts): what the
   * layer keeps, read as the white-box checks read it. Absent when the grade
   * cannot read the database (a --server).
   */
  keyTable?: (text: string) => Promise<Record<string, number>>
  /**
   * Real time a purge on a timer gets to delete expired rows, as
   * purge-bounded gives it (a lazy purge has already run): 10 s, until a
   * history of the grade sees the rows outlive it; later ones read once.
   */
  purgeWait: { ms: number }
  /** How long an answer is waited for before "no answer" is the verdict. */
  answerTimeoutMs: number
  /**
   * Restarts the histories may still cost (a SIGKILL, or a crash after the
   * commit): each takes a second or more, the rest of a history milliseconds.
   * Once spent, a crash step is skipped, and says so.
   */
  restarts: { left: number }
}

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": runHistory.<key>).
const say = phrases('runHistory', {
  heldAlone: 'held alone in the core',
  heldInCore: 'held in the core',
  waitsInCore: 'it reached the core and is waiting there: it executes',
  killedAfterCommit: 'killed after the commit ({status}), answer lost; restarted',
  answeredAtOnce: '{got}: answered at once, where it executes and waits in the held core',
  noAnswerWithin: 'no answer within {seconds} s',
  noAnswerNothingInCore: 'no answer within {seconds} s, and nothing reached the core',
  noAnswerRelease: 'no answer within {seconds} s of the release',
  answeredThoughKilled: '{answer}; answered {got} although its server was killed',
  killedWithServer: '{answer}; killed with its server (nothing committed)',
  skipNoneAlone: 'no request is held alone',
  skipCoreHoldsEvery: 'its core holds every call',
  stepsRequest: "{what}: step {step}'s request",
  heldAnswer: '{key}: {answer}',
  nothingHeld: 'nothing was held',
  letGoToFail: '{what}, let go to fail in the core: {expectation}',
  releasedTo: '{what}, released: {expectation}',
  skipAlreadyHeld: 'already held or about to fail',
  coreHoldsEvery: 'the core holds every call',
  skipNothingHeld: 'nothing held',
  skipHeldOrFailing: 'the core is held or already failing',
  nextCallFails: 'its next call fails',
  skipNoFreeCore: 'no instance with a free core',
  skipEmpty: 'the account is empty',
  clockBoundary: "+{ms} ms (k{key}'s {to})",
  clockPurge: '+{ms} ms (the purge interval)',
  skipNoRestart: 'no restart left in this check',
  restarted: 'SIGKILL, restarted',
  notArmed: '{what} (not armed: no restart left in this check)',
  ledgerExpected: 'the ledger: {rows} row(s); {balances}',
  ledgerGot: '{rows} row(s); {balances}',
  purgeStep: 'the purge interval passes; {topUp}, under a fresh key; the key table is read',
  topUpKey: "a top-up's key",
  expiredKept: '{key} expired: still kept',
  expiredGone: '{key} expired: gone',
  rememberedKept: '{key} remembered: kept',
  rememberedNoRow: '{key} remembered: no row',
  rememberedUntilTtl: '{key} is remembered until its TTL: a row of the layer still holds it',
  noRowHolds: 'no row of the layer holds {key} ({value})',
  purgeExpected: 'no row holding an expired key after a request past the purge interval ({ms} ms), whichever client used it',
  stillIn: '{key} ({value}) still in {rows}',
  tableRows: '{table}: {n} row(s)',
  skipped: '(skipped: {why})',
  notFirstBytes: "{got}: not the first answer's bytes (HTTP {status} {body})",
  headersDiffer: '{got}: Content-Type {type}, Location {location}, where the first answer had {firstType}, {firstLocation}',
  none: '(none)',
  retryAfterWrong: '{got}{missing}, where the lease has {left} s left',
  withoutRetryAfter: ' without Retry-After',
  replayUnmarked: '{got}: a replay without Idempotent-Replayed: true',
  markedNotReplay: '{got}: marked Idempotent-Replayed, but this is not a replay',
  policyWrong: '{got}: Idempotency-Key-Policy {header}, where ttl={ttl}, lease={lease}, scope="client route" belongs',
  fieldsOff: '{got}: {fields}{replayed}',
  fieldOff: '{name} {got} where {want} belongs',
  noTransferId: 'no transfer id',
  firstReplayed: ' (the first answer, replayed)',
  notMarked: ', not marked Idempotent-Replayed',
  executes201: 'it executes: 201, balanceAfter {balance}{marker}',
  executesRefused: 'it executes, and the bank refuses it: {status} {type}{marker}',
  coreFails: 'it executes and the core fails: 503, nothing moves',
  alreadyProcessed: '200 already-processed: the key was seen, nothing executes',
  replaySeen: 'the first answer replayed: {status} {body}, marked Idempotent-Replayed',
  replayLost: 'the first answer (lost in the crash) replayed: {status}, marked Idempotent-Replayed',
  keyReused: '422 idempotency-key-reused: another body under a used key, nothing executes',
  inFlight: '409 request-in-flight with Retry-After {range}: the first request holds the key',
  claimLost: '409 idempotency-claim-lost: its claim was taken over, its transfer rolls back',
  keyMissing: '400 idempotency-key-missing, nothing executes',
  keyMalformed: '400 idempotency-key-malformed: RFC 8941 refuses that quoted form, nothing executes',
  noAnswer: 'no answer ({why})',
  replayedMarker: '{answer}, replayed',
  send: 'client {client} {path} intent {intent} ({intentText}) {key}{change}{headers}{crash}{alone}',
  noKey: 'no key',
  quoted: ' (quoted)',
  upperCased: ' (upper-cased)',
  malformedForm: ' (quoted, {form}: malformed)',
  keyForm: '{key}{form}',
  reserialized: ', body re-serialized',
  fieldChanged: ', {field} changed',
  crashAfterCommit: ', crash after the commit',
  heldAloneOp: ', its core call held alone',
  hold: 'the core holds',
  release: 'the core releases',
  letGoFail: "the core lets k{key}'s held request fail (503)",
  letGoOn: "the core lets k{key}'s held request go on",
  coreFailsOnce: 'the core will fail once',
  topUp: 'client {client} tops up its first account',
  drain: 'client {client} drains its first account into its second',
  clockTo: "the clock moves to k{key}'s {to}",
  clockSecond: 'the clock moves to one second later',
  crash: 'SIGKILL and restart',
  pays: '{owner} pays ₩{amount} to {to}',
  deposits: '{owner} deposits ₩{amount} to {to}',
  missingAccount: 'a missing account',
  ownAccount: 'own account',
  otherClients: "the other client's",
})

/** SPELLING_COUNT spellings of each route that Express routes there (CONTRACT.md, Route names). */
const SPELLINGS = {
  transfers: ['/transfers', '/TRANSFERS/', '/Transfers', '/TRANSFERS', '/transfers/'],
  deposits: ['/deposits', '/DEPOSITS/', '/Deposits', '/DEPOSITS', '/deposits/'],
} as const
const OPENING_BALANCE = 40_000

class Stop extends Error {
  constructor(readonly mismatch: Mismatch) {
    super(String(mismatch.expected))
  }
}

/** A request waiting in a held core; `call` is its number when it is held alone (a `let-go` step names it). */
type Pending = { request: Request; instance: number; reply: Promise<Reply | Error>; step: Step; call?: number; keySlot?: 0 | 1 }

export async function runHistory(env: HistoryEnv, history: History, runSeed: number): Promise<HistoryRun> {
  const rng = new Rng(runSeed, 'history')
  const first = env.instances[0]!.bank
  const customers: Customer[] = [await first.newCustomer('history-a'), await first.newCustomer('history-b')]
  const accounts: string[][] = []
  for (const c of customers) accounts.push([await first.openAccount(c, OPENING_BALANCE), await first.openAccount(c, OPENING_BALANCE)])
  const opening = accounts.flatMap((ids, client) => ids.map((id) => ({ id, client, balance: OPENING_BALANCE })))
  // Every stage from the graded one on is a candidate: a server may already do
  // what a later stage adds (a stage 5 server passes every stage's checks).
  // Each answer drops the candidates that do not allow it; the history fails
  // when none is left, and is told against the strictest one still standing.
  let models = candidateStages(env.stage).map((stage) => newModel(stage, env.periods, env.clock.now(), opening))
  const lead = () => models[0]!
  const keys = [rng.uuid(), rng.uuid()]
  const cores = env.instances.map(() => ({ held: false, failNext: false }))
  const pending: Pending[] = []
  const steps: Step[] = []
  let lastLedger = await ledgerOf(first, lead())
  let convention: Mismatch | undefined
  const reached = new Set<string>()
  const parties: Party[] = customers.map((c, i) => ({
    label: i === 0 ? 'A' : 'B',
    name: c.name,
    apiKey: c.apiKey,
    accounts: [accounts[i]![0]!, accounts[i]![1]!],
    openingBalance: OPENING_BALANCE,
  }))

  const stop = (step: Step, expected: Line, got: Line, exchange?: Exchange, rule?: CourseRule): never => {
    throw new Stop({ step: step.index, expected, got, rule, exchange })
  }

  /** The intent's body, with the history's accounts. */
  const bodyOf = (spec: IntentSpec): Record<string, unknown> => {
    const own = accounts[spec.owner]!
    const other = accounts[1 - spec.owner]!
    const to = spec.to === 'own' ? own[1]! : spec.to === 'other-client' ? other[0]! : 'acc_missing'
    return {
      ...(spec.route === 'transfers' ? { from: own[0]! } : {}),
      to,
      amount: spec.amount,
      ...(spec.memo !== undefined ? { memo: spec.memo } : {}),
      ...(spec.metadata !== undefined ? { metadata: spec.metadata } : {}),
    }
  }

  /** Sends `r` to an instance and judges the answer against what each candidate allows now. */
  async function send(step: Step, at: number, r: Request, spec: RequestSpec, crashAfterCommit: boolean, alone?: { keySlot: 0 | 1 | undefined }): Promise<void> {
    const inst = env.instances[at]!
    for (const m of models) m.now = env.clock.now()
    const plans = models.map((m) => ({ m, allowed: decide(m, r) }))
    const executes = (p: { allowed: Allowed }) => p.allowed.kind === 'executes'
    if (cores[at]!.failNext) {
      const got = await answerOf(inst, spec)
      // The core's failure is spent only by a request that reached it.
      cores[at]!.failNext = !(got instanceof Reply && got.status === 503)
      return narrow(
        step,
        got,
        plans.map(({ m, allowed }) =>
          executes({ allowed })
            ? {
                m,
                allowed: { kind: 'core-unavailable' } as Allowed,
                effect: () => {
                  claim(m, r)
                  release(m, r)
                },
              }
            : { m, allowed, effect: () => undefined },
        ),
        r,
      )
    }
    if (cores[at]!.held || alone) {
      // Call numbers are each process's own.
      const known = new Set(pending.filter((p) => p.instance === at && p.call !== undefined).map((p) => p.call!))
      if (alone) await inst.bank.core({ holdNext: 1 })
      const reply = inst.bank.send(spec).catch((e: Error) => e)
      const seen = await heldOrAnswered(inst, reply, pending.filter((p) => p.instance === at).length, alone ? known : undefined)
      if (typeof seen === 'number' || seen === 'held') {
        const waiting = plans.filter(executes)
        step.answer = alone ? say('heldAlone') : say('heldInCore')
        if (waiting.length === 0) stop(step, expectation(lead(), plans[0]!.allowed), say('waitsInCore'))
        models = waiting.map((p) => p.m)
        for (const m of models) claim(m, r)
        pending.push({ request: r, instance: at, reply, step, ...(typeof seen === 'number' ? { call: seen, keySlot: alone?.keySlot } : {}) })
        return
      }
      // Answered without reaching the core: the hold it armed would catch the next call instead.
      if (alone && inst.bank.server.alive) await inst.bank.core({ holdNext: 0 })
      return narrow(
        step,
        seen,
        plans.map(({ m, allowed }) => (executes({ allowed }) ? { m, allowed, heldExpected: true } : { m, allowed })),
        r,
      )
    }
    if (crashAfterCommit && plans.every(executes)) {
      env.restarts.left--
      await inst.bank.core({ crashAfterCommit: true })
      const answer = await answerOf(inst, spec)
      if (answer instanceof Error || !inst.bank.server.alive) {
        for (const { m } of plans) {
          const outcome = bankOutcome(m, r)
          claim(m, r)
          complete(m, r, outcome, { seen: false, outcome })
        }
        step.answer = say('killedAfterCommit', { status: bankOutcome(lead(), r).status })
        await restart(inst)
        return
      }
      await inst.bank.core({ crashAfterCommit: false })
      // It answered: it did not execute (the fault fires only after a commit).
      return narrow(step, answer, plans, r)
    }
    return narrow(step, await answerOf(inst, spec), plans, r)
  }

  /**
   * Keeps the candidates that allow `got` and applies its effect to each (by
   * default: an execution claims and completes, a replay of a lost answer
   * learns its bytes). With none left, the history stops, told against the
   * strictest candidate.
   */
  function narrow(
    step: Step,
    got: Reply | Error,
    plans: Array<{ m: ModelState; allowed: Allowed; effect?: () => void; heldExpected?: boolean }>,
    r: Request,
  ): void {
    step.answer = describe(got)
    step.exchange = exchangeOf(got)
    const judged = plans.map((p) => ({
      ...p,
      wrong:
        got instanceof Error
          ? { got: step.answer, rule: undefined }
          : p.heldExpected
            ? { got: say('answeredAtOnce', { got: step.answer }), rule: undefined }
            : deviation(p.m, got, p.allowed),
    }))
    let kept = judged.filter((p) => !p.wrong)
    if (kept.length === 0) {
      const strictest = judged[0]!
      // Kept the contract, missed a course rule only: noted, and judged on under the contract alone.
      kept = judged.filter((p) => p.wrong!.rule)
      if (kept.length === 0) stop(step, expectation(strictest.m, strictest.allowed), strictest.wrong!.got, step.exchange, strictest.wrong!.rule)
      const first = kept[0]!
      convention ??= {
        step: step.index,
        expected: expectation(first.m, first.allowed),
        got: first.wrong!.got,
        rule: first.wrong!.rule,
        exchange: step.exchange,
      }
    }
    reached.add(transitionOf(kept[0]!.m, r, kept[0]!.allowed))
    for (const { m, allowed, effect } of kept) {
      if (effect) effect()
      else if (allowed.kind === 'executes') {
        claim(m, r)
        complete(m, r, allowed.outcome, stored(got as Reply))
      } else if (allowed.kind === 'replay' && !allowed.stored.seen) learnStored(m, r, stored(got as Reply))
    }
    models = kept.map((p) => p.m)
  }

  async function answerOf(inst: Instance, spec: RequestSpec): Promise<Reply | Error> {
    const reply = inst.bank.send(spec).catch((e: Error) => e)
    const timeout = new Promise<Error>((resolve) =>
      setTimeout(() => resolve(new NoAnswer(say('noAnswerWithin', { seconds: env.answerTimeoutMs / 1000 }))), env.answerTimeoutMs).unref(),
    )
    return Promise.race([reply, timeout])
  }

  /**
   * Waits until the request is answered or is seen waiting in the core: its
   * inflight count grows, or (held alone) a call number not `known` before
   * appears, which is then its number.
   */
  async function heldOrAnswered(
    inst: Instance,
    reply: Promise<Reply | Error>,
    heldBefore: number,
    known?: Set<number>,
  ): Promise<Reply | Error | 'held' | number> {
    let answered: Reply | Error | undefined
    void reply.then((r) => (answered = r))
    const deadline = Date.now() + env.answerTimeoutMs
    for (;;) {
      if (answered) return answered
      const state = await inst.bank.core({})
      const alone = known ? state.held?.find((call) => !known.has(call)) : undefined
      if (alone !== undefined) return alone
      if (!known && state.inflight > heldBefore) return 'held'
      if (answered) return answered
      if (Date.now() > deadline) return new NoAnswer(say('noAnswerNothingInCore', { seconds: env.answerTimeoutMs / 1000 }))
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  async function restart(inst: Instance): Promise<void> {
    const at = env.instances.indexOf(inst)
    if (inst.bank.server.alive) await inst.bank.server.crash()
    await inst.bank.server.start()
    cores[at] = { held: false, failNext: false }
    for (const p of pending.filter((p) => p.instance === at)) {
      pending.splice(pending.indexOf(p), 1)
      const lost = await p.reply
      // Its request, for the replay of the history, though it never had an answer.
      p.step.exchange ??= exchangeOf(lost)
      p.step.answer =
        lost instanceof Error ? say('killedWithServer', { answer: p.step.answer }) : say('answeredThoughKilled', { answer: p.step.answer, got: describe(lost) })
    }
  }

  /** Releases an instance's core: every held request completes, in an order the model cannot know, so any order that explains the answers is accepted. */
  async function releaseCore(step: Step, at: number): Promise<void> {
    const held = pending.filter((p) => p.instance === at)
    await env.instances[at]!.bank.core({ hold: false })
    cores[at]!.held = false
    return finish(step, held, false)
  }

  /** Lets one request held alone go on (or fail in the core), and judges its answer. */
  async function letGo(step: Step, op: Extract<Op, { op: 'let-go' }>): Promise<void> {
    const alone = pending.filter((p) => p.call !== undefined)
    const p = alone.find((p) => p.keySlot === op.key) ?? alone[0]
    if (!p) return skip(step, say('skipNoneAlone'))
    if (cores[p.instance]!.held) return skip(step, say('skipCoreHoldsEvery'))
    Object.assign(step, { instance: p.instance, key: p.step.key, what: say('stepsRequest', { what: step.what, step: p.step.index }) })
    await env.instances[p.instance]!.bank.core({ letGo: { call: p.call!, fails: op.fails } })
    // Let go to go on, it meets a failure armed since (core-fails): it fails there, and spends it.
    const core = cores[p.instance]!
    const fails = op.fails || core.failNext
    if (!op.fails) core.failNext = false
    return finish(step, [p], fails)
  }

  /** Waits for the answers of requests let go (`fails`: their core call failed) and keeps the candidates some order of them explains. */
  async function finish(step: Step, held: Pending[], fails: boolean): Promise<void> {
    for (const p of held) pending.splice(pending.indexOf(p), 1)
    const answers = await Promise.all(
      held.map((p) =>
        Promise.race([
          p.reply,
          new Promise<Error>((resolve) =>
            setTimeout(() => resolve(new NoAnswer(say('noAnswerRelease', { seconds: env.answerTimeoutMs / 1000 }))), env.answerTimeoutMs).unref(),
          ),
        ]),
      ),
    )
    for (const [i, p] of held.entries()) p.step.exchange ??= exchangeOf(answers[i])
    step.exchange = exchangeOf(answers[0])
    let firstTry: Mismatch | undefined
    const settled: Array<{ model: ModelState; convention?: Mismatch; transitions: string[] }> = []
    for (const m of models) {
      m.now = env.clock.now()
      const one = settle(m, held, answers, fails)
      if ('model' in one) settled.push(one)
      else firstTry ??= one.failed
    }
    step.answer = held.length
      ? listOf(
          held.map((p, i) => say('heldAnswer', { key: p.step.key ?? '', answer: describe(answers[i]!) })),
          'semicolon',
        )
      : say('nothingHeld')
    if (settled.length === 0) stop(step, firstTry!.expected, firstTry!.got, firstTry!.exchange, firstTry!.rule)
    // As in narrow(): the candidates that allow every answer; a course rule missed counts only when every candidate saw it missed.
    const clean = settled.filter((s) => !s.convention)
    if (clean.length === 0) convention ??= { ...settled[0]!.convention!, step: step.index }
    const kept = clean.length ? clean : settled
    for (const t of kept[0]!.transitions) reached.add(t)
    models = kept.map((s) => s.model)
  }

  /**
   * The candidate after the held requests finished in some order that
   * explains every answer, or the first order's failure. A request whose
   * core call failed (`fails`) answers 503 and releases its own claim only; a
   * superseded one may also be told its claim is lost. Either way nothing moves.
   */
  function settle(
    model: ModelState,
    held: Pending[],
    answers: Array<Reply | Error>,
    fails: boolean,
  ): { model: ModelState; convention?: Mismatch; transitions: string[] } | { failed: Mismatch } {
    let firstTry: Mismatch | undefined
    for (const order of permutations(held.map((_, i) => i))) {
      const trial = cloneModel(model)
      let failed: Mismatch | undefined
      let missed: Mismatch | undefined
      const transitions: string[] = []
      for (const i of order) {
        const p = held[i]!
        const got = answers[i]!
        const holder = holdsClaim(trial, p.request)
        const allowed: Allowed = fails
          ? { kind: 'core-unavailable' }
          : holder
            ? { kind: 'executes', outcome: bankOutcome(trial, p.request) }
            : { kind: 'claim-lost' }
        const judged = got instanceof Error ? { got: describe(got), rule: undefined } : deviation(trial, got, allowed)
        // A superseded request whose core call failed may say so (503) or that its claim is lost (409).
        const toldLost = fails && !holder && !(got instanceof Error) && !deviation(trial, got, { kind: 'claim-lost' })
        // An owner whose lease ran out but whom nobody superseded may complete, or be told its claim is lost.
        const lapsed = allowed.kind === 'executes' && !(got instanceof Error) && leaseLapsed(trial, p.request) && !deviation(trial, got, { kind: 'claim-lost' })
        const wrong = toldLost || lapsed ? undefined : judged
        if (wrong) {
          const mismatch = {
            step: p.step.index,
            expected: say(fails ? 'letGoToFail' : 'releasedTo', { what: p.step.what, expectation: expectation(trial, allowed) }),
            got: wrong.got,
            rule: wrong.rule,
            exchange: exchangeOf(got),
          }
          if (!wrong.rule) {
            failed = mismatch
            break
          }
          // Kept the contract, missed a course rule: noted, and judged on.
          missed ??= mismatch
        }
        // Before stage 3 a claim has no lease to run out: held is held.
        const claimState = !holder ? 'superseded' : trial.promises.leases && leaseLapsed(trial, p.request) ? 'lease run out' : 'holder'
        transitions.push(heldTransitionOf(claimState, fails ? 'let go to fail' : 'released', allowed.kind === 'claim-lost' ? 'claim-lost' : allowed))
        if (fails && holder) release(trial, p.request)
        if (allowed.kind === 'executes' && !lapsed) complete(trial, p.request, allowed.outcome, stored(got as Reply))
      }
      if (!failed) return { model: trial, transitions, ...(missed ? { convention: missed } : {}) }
      firstTry ??= failed
    }
    return { failed: firstTry! }
  }

  function leaseLapsed(m: ModelState, r: Request): boolean {
    const row = [...m.keys.values()].find((k) => k.owner === r.id)
    return !!row && m.now >= row.leaseUntil
  }

  async function perform(op: Op, step: Step): Promise<void> {
    switch (op.op) {
      case 'send':
        return sendOp(op, step)
      case 'hold': {
        const at = op.instance
        if (cores[at]!.held || cores[at]!.failNext) return skip(step, say('skipAlreadyHeld'))
        await env.instances[at]!.bank.core({ hold: true })
        cores[at]!.held = true
        step.answer = say('coreHoldsEvery')
        return
      }
      case 'release':
        if (!cores[op.instance]!.held) return skip(step, say('skipNothingHeld'))
        return releaseCore(step, op.instance)
      case 'let-go':
        return letGo(step, op)
      case 'core-fails': {
        const at = op.instance
        if (cores[at]!.held || cores[at]!.failNext) return skip(step, say('skipHeldOrFailing'))
        await env.instances[at]!.bank.core({ failNext: 1 })
        cores[at]!.failNext = true
        step.answer = say('nextCallFails')
        return
      }
      case 'top-up':
      case 'drain': {
        const at = cores.findIndex((c) => !c.held && !c.failNext)
        if (at < 0) return skip(step, say('skipNoFreeCore'))
        const [source, target] = accounts[op.client]!
        const balance = lead().accounts.get(source!)!.balance
        if (op.op === 'drain' && balance === 0) return skip(step, say('skipEmpty'))
        const key = rng.uuid()
        const body = op.op === 'top-up' ? { to: source!, amount: 20_000 } : { from: source!, to: target!, amount: balance }
        const route = op.op === 'top-up' ? 'POST /deposits' : 'POST /transfers'
        const r: Request = { id: step.index, client: op.client, route, key, fingerprint: canonicalize(body)!, body }
        Object.assign(step, { instance: at, key: 'fresh key' })
        const spec = env.instances[at]!.bank.postSpec(customers[op.client]!, op.op === 'top-up' ? '/deposits' : '/transfers', body, { key })
        return send(step, at, r, spec, false)
      }
      case 'clock': {
        const key = keys[op.key]!
        const scope = op.of
          ? scopeOf(lead(), { client: op.of.client, route: routeOf(history.intents[op.of.intent]), key })
          : [...lead().keys.keys()].find((s) => s.includes(JSON.stringify(key)))
        const bounds = scope === undefined ? undefined : boundariesOf(lead(), scope)
        const target = op.to === 'second' || !bounds ? env.clock.now() + 1_000 : bounds[BOUNDARY[op.to]]
        const to = target > env.clock.now() ? target : env.clock.now() + 1_000
        const from = env.clock.now()
        await env.clock.moveTo(to)
        for (const m of models) m.now = env.clock.now()
        step.clock = bounds && op.to !== 'second' && target === to ? say('clockBoundary', { ms: to - from, key: op.key, to: op.to }) : `+${to - from} ms`
        step.answer = ''
        return
      }
      case 'crash': {
        if (env.restarts.left <= 0) return skip(step, say('skipNoRestart'))
        env.restarts.left--
        const inst = env.instances[op.instance]!
        await restart(inst)
        step.answer = say('restarted')
        return
      }
    }
  }

  async function sendOp(op: SendOp, step: Step): Promise<void> {
    const intent = history.intents[op.intent]
    const value = changed(bodyOf(intent), op.change, accounts, intent.owner)
    const raw =
      op.change === 'reserialized'
        ? serialize(value, { order: 'shuffled', whitespace: true, respellNumbers: rng.chance(0.5), escapeStrings: true }, rng)
        : JSON.stringify(value)
    const slotKey = op.key === 'none' ? undefined : keys[op.key]!
    // Upper-cased, it is another key (keys are case-sensitive); malformed, the layer refuses it before anything.
    const key = slotKey === undefined ? undefined : op.form === 'upper-case' ? slotKey.toUpperCase() : slotKey
    const malformed = key !== undefined && op.form !== 'as-is' && op.form !== 'upper-case'
    const headerValue = key === undefined ? undefined : malformed ? KEY_MALFORMATIONS[op.form as KeyMalformation].write(key) : op.quoted ? `"${key}"` : key
    const route = routeOf(intent)
    const r: Request = {
      id: step.index,
      client: op.client,
      route,
      key,
      ...(malformed ? { malformed: true } : {}),
      fingerprint: canonicalize(value)!,
      body: value as Request['body'],
    }
    const inst = env.instances[op.instance]!
    const spec = inst.bank.postSpec(customers[op.client]!, SPELLINGS[intent.route][op.spelling]!, value, {
      raw,
      ...(headerValue !== undefined ? { key: headerValue } : {}),
      ...(op.extraHeaders.length ? { headers: Object.fromEntries(op.extraHeaders.map((h) => [h, LIBRARY_HEADERS[h]])) } : {}),
    })
    const canCrash = op.crashAfterCommit && env.faultPoint && env.restarts.left > 0
    if (op.crashAfterCommit && !canCrash) step.what = say('notArmed', { what: step.what })
    // Held alone only where nothing else would catch its call: a core held whole or failing, or a crash armed.
    const core = cores[op.instance]!
    const alone = op.holdAlone && env.holdAlone && !canCrash && !core.held && !core.failNext
    await send(step, op.instance, r, spec, canCrash, alone ? { keySlot: op.key === 'none' ? undefined : op.key } : undefined)
  }

  async function ledgerOf(bank: BankClient, m: ModelState): Promise<Map<string, number> & { rows: number }> {
    // The history's two customers' accounts and entries only: the rest of the grade's ledger is not this history's, and grows with every one.
    const ledger: Ledger = await bank.ledger(customers)
    const mine = new Set(m.accounts.keys())
    const balances = new Map(ledger.accounts.filter((a) => mine.has(a.id)).map((a) => [a.id, a.balance])) as Map<string, number> & { rows: number }
    balances.rows = ledger.entries.filter((e) => mine.has(e.to) || (e.from !== null && mine.has(e.from))).length
    return balances
  }

  /** The ledger after a step must be a candidate's: every balance of the history's accounts, and the count of their rows. */
  async function checkLedger(step: Step): Promise<void> {
    const alive = env.instances.find((i) => i.bank.server.alive) ?? env.instances[0]!
    const now = await ledgerOf(alive.bank, lead())
    const owner = (id: string) => lead().accounts.get(id)!.client
    const label = (id: string) => `${'AB'[owner(id)]}${accounts[owner(id)]!.indexOf(id)}`
    const moved = [...now].filter(([id, b]) => b !== lastLedger.get(id)).map(([id, b]) => `${label(id)} ${signed(b - lastLedger.get(id)!)}`)
    if (moved.length) step.ledger = moved.join(', ')
    const matches = (m: ModelState) => now.rows === m.entries && [...m.accounts.values()].every((a) => now.get(a.id) === a.balance)
    const kept = models.filter(matches)
    if (kept.length === 0) {
      const m = lead()
      stop(
        step,
        say('ledgerExpected', { rows: m.entries, balances: [...m.accounts.values()].map((a) => `${label(a.id)} ₩${a.balance}`).join(', ') }),
        say('ledgerGot', { rows: now.rows, balances: [...m.accounts.values()].map((a) => `${label(a.id)} ₩${now.get(a.id)}`).join(', ') }),
        step.exchange,
      )
    }
    models = kept
    lastLedger = now
  }

  /**
   * What the layer keeps, once keys have expired (stage 5): the purge
   * interval passes, a request under a fresh key gives a lazy purge its turn,
   * and then no row may hold a key whose every use expired (whoever's client
   * and route it was: a purge deletes every client's expired keys), while a
   * key still remembered keeps its row. A purge on a timer gets
   * env.purgeWait of real time.
   */
  async function judgeKeyTable(keyTable: (text: string) => Promise<Record<string, number>>): Promise<void> {
    const step: Step = { index: steps.length + 1, instance: undefined, key: undefined, what: '', answer: '' }
    steps.push(step)
    const from = env.clock.now()
    await env.clock.advance(purgeIntervalMs(lead().periods.ttlMs))
    step.clock = say('clockPurge', { ms: env.clock.now() - from })
    await perform({ op: 'top-up', client: 1 }, step)
    step.what = say('purgeStep', { topUp: describeOp({ op: 'top-up', client: 1 }, history) })
    if (String(step.answer).startsWith('(skipped')) return
    await checkLedger(step)
    const m = lead()
    m.now = env.clock.now()
    const label = (key: string): Line => (keys.indexOf(key) >= 0 ? `k${keys.indexOf(key)}` : say('topUpKey'))
    // A key string may stand for several rows (stage 5 scopes it by client and route): it must be gone only when every one of them is.
    const purged = new Set(purgeable(m))
    const scopes = [...m.keys.keys()]
    const live = new Set(scopes.filter((s) => !purged.has(s)).map(keyOfScope))
    const gone = [...new Set(scopes.map(keyOfScope))].filter((key) => !live.has(key))
    const rowsOf = async (key: string) => Object.entries(await keyTable(key)).filter(([, n]) => n > 0)
    const deadline = performance.now() + env.purgeWait.ms
    let left: Array<[string, Array<[string, number]>]> = []
    for (;;) {
      left = []
      for (const key of gone) {
        const rows = await rowsOf(key)
        if (rows.length) left.push([key, rows])
      }
      if (left.length === 0 || performance.now() > deadline) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const kept = await Promise.all([...live].map(async (key) => [key, await rowsOf(key)] as const))
    step.answer = listOf(
      [
        ...gone.map((key) => say(left.some(([k]) => k === key) ? 'expiredKept' : 'expiredGone', { key: label(key) })),
        ...kept.map(([key, rows]) => say(rows.length ? 'rememberedKept' : 'rememberedNoRow', { key: label(key) })),
      ],
      'semicolon',
    )
    // A layer may keep keys in a form the grader cannot find (hashed, say): a missing row counts only when others are found.
    const findsKeys = left.length > 0 || kept.some(([, rows]) => rows.length > 0)
    const lost = kept.find(([, rows]) => rows.length === 0)
    if (lost && findsKeys) stop(step, say('rememberedUntilTtl', { key: label(lost[0]) }), say('noRowHolds', { key: label(lost[0]), value: lost[0] }))
    if (gone.length && !left.length) reached.add(PURGE_TRANSITION)
    if (left.length) env.purgeWait.ms = 0
    if (left.length)
      convention ??= {
        step: step.index,
        expected: say('purgeExpected', { ms: purgeIntervalMs(m.periods.ttlMs) }),
        got: listOf(
          left.map(([key, rows]) => say('stillIn', { key: label(key), value: key, rows: listOf(rows.map(([table, n]) => say('tableRows', { table, n }))) })),
          'semicolon',
        ),
        rule: 'purge',
      }
  }

  try {
    for (const [index, op] of history.ops.entries()) {
      const step: Step = {
        index: index + 1,
        instance: 'instance' in op ? op.instance : undefined,
        key: op.op === 'send' ? (op.key === 'none' ? 'no key' : `k${op.key}`) : undefined,
        what: describeOp(op, history),
        answer: '',
        op,
      }
      steps.push(step)
      await perform(op, step)
      step.at = env.clock.now()
      if (op.op !== 'hold' && op.op !== 'core-fails' && op.op !== 'clock') await checkLedger(step)
    }
    if (env.keyTable && env.clock.controlled && purgeable(lead()).length) await judgeKeyTable(env.keyTable)
    return { steps, parties, transitions: [...reached], ...(convention ? { convention } : {}) }
  } catch (error) {
    if (error instanceof Stop) return { steps, parties, transitions: [...reached], mismatch: error.mismatch, ...(convention ? { convention } : {}) }
    throw error
  } finally {
    await cleanUp(env, pending)
  }
}

/**
 * Leaves every instance as the next run (or check) expects it: alive, its
 * core free. Reset whatever the model believes, since a layer that answered
 * without calling the core left a failure or a crash armed there.
 */
async function cleanUp(env: HistoryEnv, pending: Pending[]): Promise<void> {
  for (const inst of env.instances) {
    if (!inst.bank.server.alive) await inst.bank.server.start()
    else
      await inst.bank.core({
        hold: false,
        failNext: 0,
        ...(env.faultPoint ? { crashAfterCommit: false } : {}),
        ...(env.holdAlone ? { holdNext: 0 } : {}),
      })
  }
  // A request still held when the history ended is let go here: what was sent is kept for the replay.
  for (const [i, reply] of (await Promise.all(pending.map((p) => p.reply))).entries()) pending[i]!.step.exchange ??= exchangeOf(reply)
}

function skip(step: Step, why: Line): void {
  step.answer = say('skipped', { why })
}

const routeOf = (intent: IntentSpec) => (intent.route === 'transfers' ? 'POST /transfers' : 'POST /deposits') as Request['route']

const BOUNDARY = { 'lease-last': 'leaseLast', 'lease-end': 'leaseEnd', 'ttl-last': 'ttlLast', 'ttl-end': 'ttlEnd' } as const

const signed = (n: number) => (n >= 0 ? `+${n}` : String(n))

function* permutations(items: number[]): Generator<number[]> {
  if (items.length <= 1) return yield items
  for (const [i, item] of items.entries()) for (const rest of permutations(items.filter((_, j) => j !== i))) yield [item, ...rest]
}

/** The body of an intent with one change applied: the text only, or one field (a new value, or the same value as another JSON type). */
function changed(body: Record<string, unknown>, change: SendOp['change'], accounts: string[][], owner: number): Record<string, unknown> {
  const own = accounts[owner]!
  const other = accounts[1 - owner]!
  switch (change) {
    case 'same':
    case 'reserialized':
      return body
    case 'amount':
      return { ...body, amount: (body.amount as number) + 100 }
    case 'from':
      // Another account of the sender's, or another client's when that one is the payee (from = to is a 400 before any layer).
      if (!('from' in body)) return { ...body, to: body.to === own[1] ? other[1] : own[1] }
      return { ...body, from: body.to === own[1] ? other[1] : own[1] }
    case 'to':
      return { ...body, to: body.to === other[0] ? own[1] : other[0] }
    case 'memo':
      // Another memo within the 140 characters the bank takes.
      return { ...body, memo: typeof body.memo === 'string' ? `${body.memo.slice(0, 136)} (2)` : 'rent' }
    case 'metadata':
      return { ...body, metadata: { ...(body.metadata as object | undefined), reviewed: true } }
    case 'json-type':
      return { ...body, metadata: retyped((body.metadata as Record<string, unknown> | undefined) ?? { approved: false }) }
    case 'array-order': {
      // The same members in another order: RFC 8785 keeps an array's order, so it is another body.
      const metadata = (body.metadata as Record<string, unknown> | undefined) ?? {}
      const tags = Array.isArray(metadata.tags) && new Set(metadata.tags).size > 1 ? metadata.tags : ['a', 'b']
      return { ...body, metadata: { ...metadata, tags: [...tags].reverse() } }
    }
    case 'removed': {
      // An optional field left out (or, when there is none, one added): absent is not empty.
      const { memo, metadata, ...rest } = body
      if (memo !== undefined) return { ...rest, ...(metadata !== undefined ? { metadata } : {}) }
      if (metadata !== undefined) return rest
      return { ...body, memo: '' }
    }
  }
}

/** The first member whose value has a loosely equal twin of another JSON type gets that twin: false → 0, "5" → 5, null → false. */
function retyped(metadata: Record<string, unknown>): Record<string, unknown> {
  for (const [name, value] of Object.entries(metadata)) {
    if (typeof value === 'boolean') return { ...metadata, [name]: value ? 1 : 0 }
    if (typeof value === 'string' && /^\d+$/.test(value)) return { ...metadata, [name]: Number(value) }
    if (value === null) return { ...metadata, [name]: false }
  }
  return { ...metadata, approved: 0 }
}

// ---- judging one answer -----------------------------------------------------------

const MARKER = 'idempotent-replayed'

/** What is wrong with `reply` as the answer `allowed`, or undefined when nothing is. */
export function deviation(m: ModelState, reply: Reply, allowed: Allowed): { got: Line; rule?: CourseRule } | undefined {
  const got = describe(reply)
  const body = reply.json
  const type = body?.type
  const problem = (status: number, t: string) => (reply.status !== status || type !== t ? { got } : undefined)
  const main = (() => {
    switch (allowed.kind) {
      case 'executes':
        return outcomeDeviation(reply, allowed.outcome)
      case 'core-unavailable':
        return reply.status === 503 ? undefined : { got }
      case 'already-processed':
        return reply.status === 200 && body?.status === 'already-processed' ? undefined : { got }
      case 'replay': {
        const s = allowed.stored
        if (!s.seen) return outcomeDeviation(reply, s.outcome, true)
        const h = reply.headers
        if (reply.status !== s.status || reply.text !== s.body) return { got: say('notFirstBytes', { got, status: s.status, body: short(s.body) }) }
        if (h['content-type'] !== s.contentType || h.location !== s.location)
          return {
            got: say('headersDiffer', {
              got,
              type: h['content-type'] ?? '',
              location: h.location ?? say('none'),
              firstType: s.contentType ?? '',
              firstLocation: s.location ?? say('none'),
            }),
          }
        return undefined
      }
      case 'key-reused':
        return problem(422, '/problems/idempotency-key-reused')
      case 'claim-lost':
        return problem(409, '/problems/idempotency-claim-lost')
      case 'key-missing':
        return problem(400, '/problems/idempotency-key-missing')
      case 'key-malformed':
        return problem(400, '/problems/idempotency-key-malformed')
      case 'in-flight': {
        const wrong = problem(409, '/problems/request-in-flight')
        if (wrong) return wrong
        const ra = Number(reply.headers['retry-after'])
        const [lo, hi] = allowed.retryAfter
        if (!Number.isInteger(ra) || ra < lo || ra > hi)
          return {
            got: say('retryAfterWrong', {
              got,
              missing: reply.headers['retry-after'] === undefined ? say('withoutRetryAfter') : '',
              left: lo === hi ? lo : `${lo}–${hi}`,
            }),
            rule: 'retryAfter' as CourseRule,
          }
        return undefined
      }
    }
  })()
  if (main) return main
  const required = requiredHeaders(m, allowed)
  if (required.marker) {
    const present = reply.headers[MARKER] !== undefined
    if (present !== required.marker.present || (present && reply.headers[MARKER] !== 'true'))
      return {
        got: say(required.marker.present ? 'replayUnmarked' : 'markedNotReplay', { got }),
        rule: required.marker.rule,
      }
  }
  if (required.policy) {
    const header = reply.headers['idempotency-key-policy']
    let ok = false
    try {
      const d = header === undefined ? undefined : parseDictionary(header)
      ok = !!d && d.get('ttl')?.[0] === required.policy.ttl && d.get('lease')?.[0] === required.policy.lease && String(d.get('scope')?.[0]) === 'client route'
    } catch {}
    if (!ok)
      return {
        got: say('policyWrong', { got, header: header ?? say('none'), ttl: required.policy.ttl, lease: required.policy.lease }),
        rule: required.policy.rule,
      }
  }
  return undefined
}

function outcomeDeviation(reply: Reply, outcome: BankOutcome, replayed = false): { got: Line } | undefined {
  const got = describe(reply)
  if (reply.status !== outcome.status) return { got }
  const body = reply.json
  if (outcome.status !== 201) return body?.type === outcome.type ? undefined : { got }
  const fields: Array<[string, unknown]> = [
    ['to', outcome.to],
    ['amount', outcome.amount],
    ['balanceAfter', outcome.balanceAfter],
    ...(outcome.from ? ([['from', outcome.from]] as Array<[string, unknown]>) : []),
  ]
  const off = fields.filter(([name, value]) => body?.[name] !== value)
  if (off.length || typeof body?.id !== 'string')
    return {
      got: say('fieldsOff', {
        got,
        fields: off.length
          ? listOf(off.map(([name, value]) => say('fieldOff', { name, got: String(JSON.stringify(body?.[name])), want: String(JSON.stringify(value)) })))
          : say('noTransferId'),
        replayed: replayed ? say('firstReplayed') : '',
      }),
    }
  return undefined
}

function stored(reply: Reply): StoredAnswer & { seen: true } {
  return { seen: true, status: reply.status, body: reply.text, contentType: reply.headers['content-type'], location: reply.headers.location }
}

/** The allowed answer in words, with the label of a course rule it involves. */
export function expectation(m: ModelState, allowed: Allowed): Line {
  const marker = m.promises.replay ? say('notMarked') : ''
  switch (allowed.kind) {
    case 'executes': {
      const o = allowed.outcome
      return o.status === 201
        ? say('executes201', { balance: String(o.balanceAfter), marker })
        : say('executesRefused', { status: o.status, type: String(o.type), marker })
    }
    case 'core-unavailable':
      return say('coreFails')
    case 'already-processed':
      return say('alreadyProcessed')
    case 'replay':
      return allowed.stored.seen
        ? say('replaySeen', { status: allowed.stored.status, body: short(allowed.stored.body) })
        : say('replayLost', { status: allowed.stored.outcome.status })
    case 'key-reused':
      return say('keyReused')
    case 'in-flight':
      return say('inFlight', {
        range: `${allowed.retryAfter[0]}${allowed.retryAfter[1] !== allowed.retryAfter[0] ? `–${allowed.retryAfter[1]}` : ''}`,
      })
    case 'claim-lost':
      return say('claimLost')
    case 'key-missing':
      return say('keyMissing')
    case 'key-malformed':
      return say('keyMalformed')
  }
}

export const ruleLabel = (rule: CourseRule | undefined) => (rule ? ` (${courseRuleLabel(rule)})` : '')

/** An answer in words: its status and what tells it apart (evidence), or why there is none. */
export function describe(reply: Reply | Error | 'held'): Line {
  if (reply === 'held') return say('heldInCore')
  if (reply instanceof Error) return say('noAnswer', { why: reply instanceof NoAnswer ? reply.said : reply.message })
  const answer = evidenceOf(reply)
  return reply.headers[MARKER] ? say('replayedMarker', { answer }) : answer
}

/** An answer's status and what tells it apart, as it came. */
function evidenceOf(reply: Reply): string {
  const body = reply.json
  if (reply.status === 201) return `201 ${body?.id ?? ''} balanceAfter ${body?.balanceAfter}`
  if (body?.type)
    return `${reply.status} ${String(body.type).replace('/problems/', '')}${reply.headers['retry-after'] ? ` Retry-After ${reply.headers['retry-after']}` : ''}`
  if (reply.status === 200 && body?.status) return `200 ${body.status}`
  return `${reply.status} ${short(reply.text)}`
}

/** A request that got no answer in time, and why, in the learner's language. */
class NoAnswer extends Error {
  constructor(readonly said: Phrase) {
    super(String(said))
  }
}

const short = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s)

const exchangeOf = (got: Reply | Error | 'held' | undefined): Exchange | undefined =>
  got instanceof Reply ? got.exchange : got instanceof Error ? (got as Error & { exchange?: Exchange }).exchange : undefined

export function describeOp(op: Op, history: History): Line {
  switch (op.op) {
    case 'send': {
      const intent = history.intents[op.intent]
      const form =
        op.form === 'as-is' ? (op.quoted ? say('quoted') : '') : op.form === 'upper-case' ? say('upperCased') : say('malformedForm', { form: op.form })
      return say('send', {
        client: 'AB'[op.client]!,
        path: SPELLINGS[intent.route][op.spelling]!,
        intent: op.intent,
        intentText: describeIntent(intent),
        key: op.key === 'none' ? say('noKey') : say('keyForm', { key: `k${op.key}`, form }),
        change: op.change === 'same' ? '' : op.change === 'reserialized' ? say('reserialized') : say('fieldChanged', { field: op.change }),
        headers: op.extraHeaders.length ? ` + ${op.extraHeaders.map((h) => `${h}: ${LIBRARY_HEADERS[h]}`).join(', ')}` : '',
        crash: op.crashAfterCommit ? say('crashAfterCommit') : '',
        alone: op.holdAlone ? say('heldAloneOp') : '',
      })
    }
    case 'hold':
      return say('hold')
    case 'release':
      return say('release')
    case 'let-go':
      return say(op.fails ? 'letGoFail' : 'letGoOn', { key: op.key })
    case 'core-fails':
      return say('coreFailsOnce')
    case 'top-up':
      return say('topUp', { client: 'AB'[op.client]! })
    case 'drain':
      return say('drain', { client: 'AB'[op.client]! })
    case 'clock':
      return op.to === 'second' ? say('clockSecond') : say('clockTo', { key: op.key, to: op.to })
    case 'crash':
      return say('crash')
  }
}

function describeIntent(i: IntentSpec): Line {
  const to = i.to === 'missing' ? say('missingAccount') : i.to === 'own' ? say('ownAccount') : say('otherClients')
  return say(i.route === 'transfers' ? 'pays' : 'deposits', { owner: 'AB'[i.owner]!, amount: i.amount, to })
}
