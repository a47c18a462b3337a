// Stage 5: a key belongs to (client, route, key), and lives a published time.
//
// The scope checks are here (retention is in stage5Retention.ts, the published
// policy in stage5Policy.ts). A key is one client's name for one of its
// intents on one route: another client that picks the same string (by chance,
// or by reading it off a shared log) must see nothing of ours, neither our
// stored response nor a 409 or 422 that only our request could cause.
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BankClient, Ledger, TransferBody } from '#harness/bankClient.ts'
import { expectEqual, expectStatus, fail, type Check, type CheckContext } from '../engine/check.ts'
import type { Reply } from '#harness/http.ts'
import { expectConsistent, expectNotExecutedAgain, newRows, openParties } from './setup.ts'
import { heldBurst } from './heldBurst.ts'
import { isReplay, replayDeviations } from './replies.ts'
import { oneRouteAnySpelling } from './routeSpelling.ts'
import { policyPublished } from './stage5Policy.ts'
import { retentionChecks } from './stage5Retention.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage5.<key>).
const say = phrases('stage5', {
  leaked: "it is the other client's stored response (their HTTP {status}): that client's response leaked",
  conflictOther: 'a 409 says "someone is using this key right now": the other client\'s request, not this one, caused it',
  reusedOther: 'a 422 says "this key was used with another body": by the other client, not by this one',
  refusedOther: "an HTTP {status} refused this valid request over the key: the other client's use of it, not this request, caused it",
  crossed:
    "{count} answer(s) to one client were built from another client's request with the same key. Keys are scoped per client, so each was new to the server:\n{list}",
  crossedItem: '- {what}: {why}',
  ownAnswer: "an answer about this client's own request",
  mustExecute: '{what} must execute',
  describesOwn: "{what}: the 201 must describe this request's own transfer",
  markedReplay: '{what} executed but was marked as a replay (see first-response-unmarked)',
  notStoredBytes: '{what} is not the stored response byte for byte (see replay-exact)',
  lacks: '{what}: {deviations} (see replay-exact, replay-marked)',
  clientA: 'client A',
  clientB: 'client B',
  sameInstant: "{who}'s transfer, sent at the same instant as the other client's with the same key",
  transferOf: "{who}'s transfer",
  retryOf: "{who}'s retry",
  twoRows: 'two clients, two intents: two ledger rows',
  perClientNote: 'one key, two clients at the same instant: two transfers ({first} and {second}), each retry answered with its own',
  theTransfer: 'the transfer',
  theDeposit: 'the deposit',
  otherRoute: '{what} reused a key this client had used on the other route; routes are separate scopes, so it must execute',
  executed201: 'HTTP 201, executed',
  otherRouteStored: "HTTP {status}, the other route's stored response",
  describesEntry: "{what}'s 201 describes a {prefix}… entry of {path}",
  theRetryOf: 'the retry of {what}',
  gotOtherRoute: "{what} got the other route's stored response: routes are separate scopes",
  onceEach: 'one transfer and one deposit moved money, once each',
  bNeither: "client B's requests neither reached the core nor were answered within 5 s",
  aHeld: "client A's held transfer",
  bOwnInFlight: "client B's own transfer, sent while client A's request with the same key was in flight",
  bOwnUnderA: "client B's own transfer under client A's key",
  bCopyInFlight: "client B's copy of client A's body, sent while client A's request with the same key was in flight",
  aTransfer: "client A's transfer",
  aBeyond: "client A's transfer beyond its balance is refused",
  bOwnAfter201: "client B's own transfer under a key client A had completed with a 201",
  bCopyCompleted: "client B's copy of client A's exact body under client A's completed key",
  bOwnAfter402: "client B's own transfer under a key client A had completed with a stored 402",
  aFour: "client A's four transfers moved money once each",
  bThree: "client B's three own transfers moved money once each",
  copyRefused: "{what}: as this client's own request it debits an account that is not its own",
})

/**
 * Why `reply`, sent under a key another client also used, is built from that
 * client's request (undefined: it is not). Any such answer is a leak: a copy
 * of their stored response (a 201 or a stored 402/403/404, byte for byte or
 * naming their transfer), or a refusal (409, 422, or any other 4xx from 405
 * up: this client's request is valid and funded) only their request could cause.
 * The day's judge counts the same answers as leaks (replay/judge.ts, causedByAnotherClient).
 * (A replay marker alone is not judged here: on this client's own fresh
 * answer it is first-response-unmarked's business.)
 */
export function crossing(reply: Reply, foreign: Reply[]): Phrase | undefined {
  const copied = foreign.find((f) => f.text === reply.text || (typeof f.json?.id === 'string' && reply.text.includes(f.json.id)))
  if (copied) return say('leaked', { status: copied.status })
  if (reply.status === 409) return say('conflictOther')
  if (reply.status === 422) return say('reusedOther')
  if (reply.status >= 405 && reply.status < 500) return say('refusedOther', { status: reply.status })
  return undefined
}

/** Every answer that crossed from one client to another, reported together at the end. */
class Crossings {
  private found: Array<{ what: Line; why: Phrase; reply: Reply }> = []
  /** Records `reply` if it crossed; true if it did. */
  check(reply: Reply, foreign: Reply[], what: Line): boolean {
    const why = crossing(reply, foreign)
    if (why) this.found.push({ what, why, reply })
    return why !== undefined
  }
  expectNone(): void {
    const [first] = this.found
    if (!first) return
    fail(
      say('crossed', {
        count: this.found.length,
        list: listOf(
          this.found.map((f) => say('crossedItem', { what: f.what, why: f.why })),
          'lines',
        ),
      }),
      {
        exchange: first.reply.exchange,
        expected: say('ownAnswer'),
        got: `HTTP ${first.reply.status} ${first.reply.text.slice(0, 200)}`,
      },
    )
  }
}

/** A 201 that executed this very body (a marker on it is noted: first-response-unmarked judges it). */
function expectOwnTransfer(ctx: CheckContext, reply: Reply, body: TransferBody, what: Line): void {
  expectStatus(reply, 201, say('mustExecute', { what }))
  const got = reply.json
  expectEqual(
    { from: got?.from, to: got?.to, amount: got?.amount },
    { from: body.from, to: body.to, amount: body.amount },
    say('describesOwn', { what }),
    reply.exchange,
  )
  if (isReplay(reply)) ctx.note(say('markedReplay', { what }))
}

/** A retry of one's own completed request: its own outcome, not executed again; what else differs is noted. */
async function expectOwnRetry(ctx: CheckContext, bank: BankClient, before: Ledger, rows: number, own: Reply, retry: Reply, what: Line) {
  await expectNotExecutedAgain(bank, before, rows, retry, what)
  if (retry.status !== own.status || retry.text !== own.text) ctx.note(say('notStoredBytes', { what }))
  else if (replayDeviations(own, retry).length) ctx.note(say('lacks', { what, deviations: listOf(replayDeviations(own, retry)) }))
}

const scopePerClient: Check = {
  id: 'scope-per-client',
  title: 'The same key from two clients at the same instant makes two transfers, each answered with its own',
  points: 6,
  hint: "A key is the client's own name for its intent: make the client part of the scope (idempotency.ts) and of the PRIMARY KEY (keyStore.ts).",
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const parties = await openParties(ctx, 2)
    const key = ctx.rng.uuid()
    const [a, b] = parties
    const intents = ctx.rng.shuffle([
      { who: say('clientA'), party: a, body: { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000) } },
      { who: say('clientB'), party: b, body: { from: b.accounts[0]!, to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount(1_000, 90_000) } },
    ])
    const before = await bank.ledger()
    const crossings = new Crossings()
    // Both at the same instant, the core held until the layer decided both.
    const { replies } = await heldBurst([{ bank, specs: intents.map((i) => bank.postSpec(i.party.customer, '/transfers', i.body, { key })) }])
    intents.forEach((intent, n) => crossings.check(replies[n]!, [replies[1 - n]!], say('sameInstant', { who: intent.who })))
    crossings.expectNone()
    intents.forEach((intent, n) => expectOwnTransfer(ctx, replies[n]!, intent.body, say('transferOf', { who: intent.who })))
    // Each client's retry gets its own first response back, and nothing of the other's.
    for (const n of ctx.rng.shuffle([0, 1])) {
      const what = say('retryOf', { who: intents[n]!.who })
      const retry = await bank.transfer(intents[n]!.party.customer, intents[n]!.body, { key })
      if (retry.status !== replies[n]!.status || retry.text !== replies[n]!.text) crossings.check(retry, [replies[1 - n]!], what)
      crossings.expectNone()
      await expectOwnRetry(ctx, bank, before, 2, replies[n]!, retry, what)
    }
    const after = await bank.ledger()
    expectEqual(newRows(before, after).length, 2, say('twoRows'))
    expectConsistent(after)
    ctx.note(say('perClientNote', { first: `₩${intents[0]!.body.amount}`, second: `₩${intents[1]!.body.amount}` }))
  },
}

const scopePerRoute: Check = {
  id: 'scope-per-route',
  title: 'The same key on POST /transfers and POST /deposits names two different requests',
  points: 4,
  hint: 'The route (method and path, op.route) is part of the scope: a key used for a transfer says nothing about a deposit.',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a] = await openParties(ctx, 1)
    const key = ctx.rng.uuid()
    const intents = ctx.rng.shuffle([
      {
        what: say('theTransfer'),
        path: '/transfers',
        prefix: 'tr_',
        body: { from: a.accounts[0]!, to: a.accounts[1]!, amount: ctx.rng.amount(1_000, 90_000) } as object,
      },
      { what: say('theDeposit'), path: '/deposits', prefix: 'dp_', body: { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() } as object },
    ])
    const before = await bank.ledger()
    const firsts: Reply[] = []
    for (const intent of intents) {
      const reply = await bank.send(bank.postSpec(a.customer, intent.path, intent.body, { key }))
      if ((reply.status >= 405 && reply.status < 500) || (firsts[0] && reply.text === firsts[0].text))
        fail(say('otherRoute', { what: intent.what }), {
          exchange: reply.exchange,
          expected: say('executed201'),
          got: firsts[0] && reply.text === firsts[0].text ? say('otherRouteStored', { status: reply.status }) : `HTTP ${reply.status}`,
        })
      expectStatus(reply, 201, say('mustExecute', { what: intent.what }))
      expectEqual(
        String(reply.json?.id).startsWith(intent.prefix),
        true,
        say('describesEntry', { what: intent.what, prefix: intent.prefix, path: intent.path }),
        reply.exchange,
      )
      firsts.push(reply)
    }
    for (const n of ctx.rng.shuffle([0, 1])) {
      const intent = intents[n]!
      const what = say('theRetryOf', { what: intent.what })
      const retry = await bank.send(bank.postSpec(a.customer, intent.path, intent.body, { key }))
      if (retry.text === firsts[1 - n]!.text)
        fail(say('gotOtherRoute', { what }), {
          exchange: retry.exchange,
          expected: firsts[n]!.text,
          got: retry.text,
        })
      await expectOwnRetry(ctx, bank, before, 2, firsts[n]!, retry, what)
    }
    const rows = newRows(before, await bank.ledger())
    expectEqual(rows.map((r) => r.kind).sort(), ['deposit', 'transfer'], say('onceEach'))
  },
}

/** A request sent now and looked at later; its failure is handled when it is awaited. */
function watch(reply: Promise<Reply>) {
  const w: { promise: Promise<Reply>; reply?: Reply; done: boolean } = { promise: reply, done: false }
  reply.then(
    (r) => Object.assign(w, { reply: r, done: true }),
    () => Object.assign(w, { done: true }),
  )
  return w
}

const noCrossClientSignal: Check = {
  id: 'no-cross-client-signal',
  title: "Another client's key never earns a 409, a 422 or a replay: in flight or completed, 201 or 402, same body or not",
  points: 6,
  hint: 'Look the key up by (client, route, key) everywhere, in the claim and in every later query: a row of another client must be invisible.',
  timeoutMs: 20_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    // Small amounts: A's four transfers from one account always fit its opening balance (at least SMALLEST_OPENING, setup.ts).
    const ofA = (): TransferBody => ({ from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 20_000) })
    const ofB = (): TransferBody => ({ from: b.accounts[0]!, to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount(1_000, 20_000) })
    const before = await bank.ledger()
    const fromA: Reply[] = []
    const crossings = new Crossings()

    // 1. While A's two requests are held in flight, B sends the same two keys:
    //    one with its own body, one with A's body byte for byte.
    const flight = { keys: [ctx.rng.uuid(), ctx.rng.uuid()], a: [ofA(), ofA()], b: ofB() }
    let bFlight: ReturnType<typeof watch>[]
    let aFlight: ReturnType<typeof watch>[]
    await bank.core({ hold: true })
    try {
      aFlight = flight.keys.map((key, i) => watch(bank.transfer(a.customer, flight.a[i]!, { key })))
      await bank.waitForInflight(2)
      bFlight = [watch(bank.transfer(b.customer, flight.b, { key: flight.keys[0] })), watch(bank.transfer(b.customer, flight.a[1]!, { key: flight.keys[1] }))]
      // Each of B's requests either reaches the core (it executes) or is answered: wait until we know which.
      const deadline = Date.now() + 5_000
      for (;;) {
        const { inflight } = await bank.core({})
        if (inflight - 2 + bFlight.filter((w) => w.done).length >= 2) break
        if (Date.now() > deadline) fail(say('bNeither'))
        await sleep(20)
      }
    } finally {
      await bank.core({ hold: false })
    }
    for (const [i, w] of aFlight.entries()) {
      fromA.push(await w.promise)
      expectOwnTransfer(ctx, fromA.at(-1)!, flight.a[i]!, say('aHeld'))
    }
    const [bOwn, bCopy] = [await bFlight[0]!.promise, await bFlight[1]!.promise]
    if (!crossings.check(bOwn, fromA, say('bOwnInFlight'))) expectOwnTransfer(ctx, bOwn, flight.b, say('bOwnUnderA'))
    expectCopyRefused(bCopy, say('bCopyInFlight'))

    // 2. After A's requests completed (two 201s and a stored 402), the same again with three new keys.
    const done = { keys: [ctx.rng.uuid(), ctx.rng.uuid(), ctx.rng.uuid()], a: [ofA(), ofA(), { ...ofA(), amount: 10_000_000 + ctx.rng.amount() }] }
    for (const [i, key] of done.keys.entries()) {
      fromA.push(await bank.transfer(a.customer, done.a[i]!, { key }))
      if (i < 2) expectOwnTransfer(ctx, fromA.at(-1)!, done.a[i]!, say('aTransfer'))
      else expectStatus(fromA.at(-1)!, 402, say('aBeyond'))
    }
    const bOwnBodies = [ofB(), ofB()]
    const sends = ctx.rng.shuffle([
      { key: done.keys[0]!, own: bOwnBodies[0], what: say('bOwnAfter201') },
      { key: done.keys[1]!, own: undefined, what: say('bCopyCompleted') },
      { key: done.keys[2]!, own: bOwnBodies[1], what: say('bOwnAfter402') },
    ])
    for (const send of sends) {
      if (!send.own) {
        expectCopyRefused(await bank.transfer(b.customer, done.a[1]!, { key: send.key }), send.what)
        continue
      }
      const reply = await bank.transfer(b.customer, send.own, { key: send.key })
      if (!crossings.check(reply, fromA, send.what)) expectOwnTransfer(ctx, reply, send.own, send.what)
    }
    crossings.expectNone()

    const rows = newRows(before, await bank.ledger())
    expectEqual(rows.filter((r) => r.from === a.accounts[0]).length, 4, say('aFour'))
    expectEqual(rows.filter((r) => r.from === b.accounts[0]).length, 3, say('bThree'))

    /** B sent A's exact body: as B's own request it debits A's account, so it executes and is refused 403. */
    function expectCopyRefused(reply: Reply, what: Line) {
      if (crossings.check(reply, fromA, what)) return
      expectStatus(reply, 403, say('copyRefused', { what }))
    }
  },
}

export const stage5: Check[] = [scopePerClient, scopePerRoute, oneRouteAnySpelling, noCrossClientSignal, ...retentionChecks, policyPublished]
