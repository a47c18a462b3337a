// Stage 5: a key belongs to (client, route, key), and lives a published time.
//
// The scope checks are here (retention is in stage5Retention.ts, the published
// policy in stage5Policy.ts). A key is one client's name for one of its
// intents on one route: another client that picks the same string (by chance,
// or by reading it off a shared log) must see nothing of ours, neither our
// stored response nor a 409 or 422 that only our request could cause.
import { listOf } from '#harness/i18n/phrase.ts'
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
export function crossing(reply: Reply, foreign: Reply[]): string | undefined {
  const copied = foreign.find((f) => f.text === reply.text || (typeof f.json?.id === 'string' && reply.text.includes(f.json.id)))
  if (copied) return `it is the other client's stored response (their HTTP ${copied.status}): that client's response leaked`
  if (reply.status === 409) return 'a 409 says "someone is using this key right now": the other client\'s request, not this one, caused it'
  if (reply.status === 422) return 'a 422 says "this key was used with another body": by the other client, not by this one'
  if (reply.status >= 405 && reply.status < 500)
    return `an HTTP ${reply.status} refused this valid request over the key: the other client's use of it, not this request, caused it`
  return undefined
}

/** Every answer that crossed from one client to another, reported together at the end. */
class Crossings {
  private found: Array<{ what: string; why: string; reply: Reply }> = []
  /** Records `reply` if it crossed; true if it did. */
  check(reply: Reply, foreign: Reply[], what: string): boolean {
    const why = crossing(reply, foreign)
    if (why) this.found.push({ what, why, reply })
    return why !== undefined
  }
  expectNone(): void {
    const [first] = this.found
    if (!first) return
    fail(
      `${this.found.length} answer(s) to one client were built from another client's request with the same key. Keys are scoped per client, so each was new to the server:\n` +
        this.found.map((f) => `- ${f.what}: ${f.why}`).join('\n'),
      {
        exchange: first.reply.exchange,
        expected: "an answer about this client's own request",
        got: `HTTP ${first.reply.status} ${first.reply.text.slice(0, 200)}`,
      },
    )
  }
}

/** A 201 that executed this very body (a marker on it is noted: first-response-unmarked judges it). */
function expectOwnTransfer(ctx: CheckContext, reply: Reply, body: TransferBody, what: string): void {
  expectStatus(reply, 201, `${what} must execute`)
  const got = reply.json
  expectEqual(
    { from: got?.from, to: got?.to, amount: got?.amount },
    { from: body.from, to: body.to, amount: body.amount },
    `${what}: the 201 must describe this request's own transfer`,
    reply.exchange,
  )
  if (isReplay(reply)) ctx.note(`${what} executed but was marked as a replay (see first-response-unmarked)`)
}

/** A retry of one's own completed request: its own outcome, not executed again; what else differs is noted. */
async function expectOwnRetry(ctx: CheckContext, bank: BankClient, before: Ledger, rows: number, own: Reply, retry: Reply, what: string) {
  await expectNotExecutedAgain(bank, before, rows, retry, what)
  if (retry.status !== own.status || retry.text !== own.text) ctx.note(`${what} is not the stored response byte for byte (see replay-exact)`)
  else if (replayDeviations(own, retry).length) ctx.note(`${what}: ${listOf(replayDeviations(own, retry))} (see replay-exact, replay-marked)`)
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
      { who: 'client A', party: a, body: { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000) } },
      { who: 'client B', party: b, body: { from: b.accounts[0]!, to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount(1_000, 90_000) } },
    ])
    const before = await bank.ledger()
    const crossings = new Crossings()
    // Both at the same instant, the core held until the layer decided both.
    const { replies } = await heldBurst([{ bank, specs: intents.map((i) => bank.postSpec(i.party.customer, '/transfers', i.body, { key })) }])
    intents.forEach((intent, n) =>
      crossings.check(replies[n]!, [replies[1 - n]!], `${intent.who}'s transfer, sent at the same instant as the other client's with the same key`),
    )
    crossings.expectNone()
    intents.forEach((intent, n) => expectOwnTransfer(ctx, replies[n]!, intent.body, `${intent.who}'s transfer`))
    // Each client's retry gets its own first response back, and nothing of the other's.
    for (const n of ctx.rng.shuffle([0, 1])) {
      const what = `${intents[n]!.who}'s retry`
      const retry = await bank.transfer(intents[n]!.party.customer, intents[n]!.body, { key })
      if (retry.status !== replies[n]!.status || retry.text !== replies[n]!.text) crossings.check(retry, [replies[1 - n]!], what)
      crossings.expectNone()
      await expectOwnRetry(ctx, bank, before, 2, replies[n]!, retry, what)
    }
    const after = await bank.ledger()
    expectEqual(newRows(before, after).length, 2, 'two clients, two intents: two ledger rows')
    expectConsistent(after)
    ctx.note(
      `one key, two clients at the same instant: two transfers (₩${intents[0]!.body.amount} and ₩${intents[1]!.body.amount}), each retry answered with its own`,
    )
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
        what: 'the transfer',
        path: '/transfers',
        prefix: 'tr_',
        body: { from: a.accounts[0]!, to: a.accounts[1]!, amount: ctx.rng.amount(1_000, 90_000) } as object,
      },
      { what: 'the deposit', path: '/deposits', prefix: 'dp_', body: { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() } as object },
    ])
    const before = await bank.ledger()
    const firsts: Reply[] = []
    for (const intent of intents) {
      const reply = await bank.send(bank.postSpec(a.customer, intent.path, intent.body, { key }))
      if ((reply.status >= 405 && reply.status < 500) || (firsts[0] && reply.text === firsts[0].text))
        fail(`${intent.what} reused a key this client had used on the other route; routes are separate scopes, so it must execute`, {
          exchange: reply.exchange,
          expected: 'HTTP 201, executed',
          got: `HTTP ${reply.status}${firsts[0] && reply.text === firsts[0].text ? ", the other route's stored response" : ''}`,
        })
      expectStatus(reply, 201, `${intent.what} must execute`)
      expectEqual(
        String(reply.json?.id).startsWith(intent.prefix),
        true,
        `${intent.what}'s 201 describes a ${intent.prefix}… entry of ${intent.path}`,
        reply.exchange,
      )
      firsts.push(reply)
    }
    for (const n of ctx.rng.shuffle([0, 1])) {
      const intent = intents[n]!
      const what = `the retry of ${intent.what}`
      const retry = await bank.send(bank.postSpec(a.customer, intent.path, intent.body, { key }))
      if (retry.text === firsts[1 - n]!.text)
        fail(`${what} got the other route's stored response: routes are separate scopes`, {
          exchange: retry.exchange,
          expected: firsts[n]!.text,
          got: retry.text,
        })
      await expectOwnRetry(ctx, bank, before, 2, firsts[n]!, retry, what)
    }
    const rows = newRows(before, await bank.ledger())
    expectEqual(rows.map((r) => r.kind).sort(), ['deposit', 'transfer'], 'one transfer and one deposit moved money, once each')
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
        if (Date.now() > deadline) fail("client B's requests neither reached the core nor were answered within 5 s")
        await sleep(20)
      }
    } finally {
      await bank.core({ hold: false })
    }
    for (const [i, w] of aFlight.entries()) {
      fromA.push(await w.promise)
      expectOwnTransfer(ctx, fromA.at(-1)!, flight.a[i]!, "client A's held transfer")
    }
    const [bOwn, bCopy] = [await bFlight[0]!.promise, await bFlight[1]!.promise]
    if (!crossings.check(bOwn, fromA, "client B's own transfer, sent while client A's request with the same key was in flight"))
      expectOwnTransfer(ctx, bOwn, flight.b, "client B's own transfer under client A's key")
    expectCopyRefused(bCopy, "client B's copy of client A's body, sent while client A's request with the same key was in flight")

    // 2. After A's requests completed (two 201s and a stored 402), the same again with three new keys.
    const done = { keys: [ctx.rng.uuid(), ctx.rng.uuid(), ctx.rng.uuid()], a: [ofA(), ofA(), { ...ofA(), amount: 10_000_000 + ctx.rng.amount() }] }
    for (const [i, key] of done.keys.entries()) {
      fromA.push(await bank.transfer(a.customer, done.a[i]!, { key }))
      if (i < 2) expectOwnTransfer(ctx, fromA.at(-1)!, done.a[i]!, "client A's transfer")
      else expectStatus(fromA.at(-1)!, 402, "client A's transfer beyond its balance is refused")
    }
    const bOwnBodies = [ofB(), ofB()]
    const sends = ctx.rng.shuffle([
      { key: done.keys[0]!, own: bOwnBodies[0], what: "client B's own transfer under a key client A had completed with a 201" },
      { key: done.keys[1]!, own: undefined, what: "client B's copy of client A's exact body under client A's completed key" },
      { key: done.keys[2]!, own: bOwnBodies[1], what: "client B's own transfer under a key client A had completed with a stored 402" },
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
    expectEqual(rows.filter((r) => r.from === a.accounts[0]).length, 4, "client A's four transfers moved money once each")
    expectEqual(rows.filter((r) => r.from === b.accounts[0]).length, 3, "client B's three own transfers moved money once each")

    /** B sent A's exact body: as B's own request it debits A's account, so it executes and is refused 403. */
    function expectCopyRefused(reply: Reply, what: string) {
      if (crossings.check(reply, fromA, what)) return
      expectStatus(reply, 403, `${what}: as this client's own request it debits an account that is not its own`)
    }
  },
}

export const stage5: Check[] = [scopePerClient, scopePerRoute, oneRouteAnySpelling, noCrossClientSignal, ...retentionChecks, policyPublished]
