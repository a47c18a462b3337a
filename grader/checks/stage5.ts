// Stage 5: a key belongs to (client, route, key), and lives a published time.
//
// The scope checks are here (retention is in stage5Retention.ts, the published
// policy in stage5Policy.ts). A key is one client's name for one of its
// intents on one route: another client that picks the same string (by chance,
// or by reading it off a shared log) must see nothing of ours, neither our
// stored response nor a 409 or 422 that only our request could cause.
import { setTimeout as sleep } from 'node:timers/promises'
import type { TransferBody } from '../bankClient.ts'
import { expectEqual, expectStatus, fail, type Check } from '../check.ts'
import type { Reply } from '../http.ts'
import { expectConsistent, newRows, openParties, type Party } from './fixtures.ts'
import { heldBurst } from './heldBurst.ts'
import { expectFirstAnswer, expectReplayOf, isReplay } from './replies.ts'
import { oneRouteAnySpelling } from './routeSpelling.ts'
import { policyPublished } from './stage5Policy.ts'
import { retentionChecks } from './stage5Retention.ts'

/** A 201 that executed this very body: not a replay, not someone else's transfer. */
function expectOwnTransfer(reply: Reply, body: TransferBody, what: string): void {
  expectStatus(reply, 201, `${what} must execute`)
  expectFirstAnswer(reply, what)
  const got = reply.json
  expectEqual({ from: got?.from, to: got?.to, amount: got?.amount }, { from: body.from, to: body.to, amount: body.amount }, `${what}: the 201 must describe this request's own transfer`, reply.exchange)
}

/** `reply` went to one client; nothing of another client's stored answers may be in it. */
function expectNoLeak(reply: Reply, foreign: Reply[], what: string): void {
  const leaked = foreign.find((f) => f.json?.id && reply.text.includes(f.json.id))
  if (leaked)
    fail(`${what}: the response names a transfer another client made with the same key: that client's stored response leaked`, {
      exchange: reply.exchange,
      expected: 'a response about this client\'s own request',
      got: reply.text,
    })
}

/** What a wrong answer to another client's key gives away, said plainly. */
function crossed(reply: Reply, what: string): never {
  const why =
    reply.status === 409
      ? 'a 409 says "someone is using this key right now": the other client\'s request, not this one, caused it'
      : reply.status === 422
        ? 'a 422 says "this key was used with another body": by the other client, not by this one'
        : isReplay(reply)
          ? 'this is a replay of the other client\'s stored response'
          : 'the answer depends on the other client\'s request'
  fail(`${what}: ${why}. Keys are scoped per client, so this request is new to the server`, { exchange: reply.exchange })
}

const scopePerClient: Check = {
  id: 'scope-per-client',
  title: 'The same key from two clients at the same instant makes two transfers, each answered with its own',
  points: 6,
  hint: 'A key is the client\'s own name for its intent: make the client part of the scope (idempotency.ts) and of the PRIMARY KEY (keyStore.ts).',
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const parties = await openParties(ctx, 2)
    const key = ctx.rng.uuid()
    const [a, b] = parties as [Party, Party]
    const intents = ctx.rng.shuffle([
      { who: 'client A', party: a, body: { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000) } },
      { who: 'client B', party: b, body: { from: b.accounts[0]!, to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount(1_000, 90_000) } },
    ])
    const before = await bank.ledger()
    // Both at the same instant, the core held until the layer decided both.
    const { replies } = await heldBurst([{ bank, specs: intents.map((i) => bank.postSpec(i.party.customer, '/transfers', i.body, { key })) }])
    intents.forEach((intent, n) => {
      const reply = replies[n]!
      if (reply.status === 409 || reply.status === 422) crossed(reply, `${intent.who}'s transfer, sent at the same instant as the other client's with the same key`)
      expectOwnTransfer(reply, intent.body, `${intent.who}'s transfer`)
    })
    // Each client's retry gets its own first response back, and only that.
    for (const n of ctx.rng.shuffle([0, 1])) {
      const retry = await bank.transfer(intents[n]!.party.customer, intents[n]!.body, { key })
      expectReplayOf(replies[n]!, retry, `${intents[n]!.who}'s retry`)
      expectNoLeak(retry, [replies[1 - n]!], `${intents[n]!.who}'s retry`)
    }
    const after = await bank.ledger()
    expectEqual(newRows(before, after).length, 2, 'two clients, two intents: two ledger rows')
    expectConsistent(after)
    ctx.note(`one key, two clients at the same instant: two transfers (₩${intents[0]!.body.amount} and ₩${intents[1]!.body.amount}), each retry replayed its own`)
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
    const [a] = (await openParties(ctx, 1)) as [Party]
    const key = ctx.rng.uuid()
    const intents = ctx.rng.shuffle([
      { what: 'the transfer', path: '/transfers', body: { from: a.accounts[0]!, to: a.accounts[1]!, amount: ctx.rng.amount(1_000, 90_000) } as object },
      { what: 'the deposit', path: '/deposits', body: { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() } as object },
    ])
    const before = await bank.ledger()
    const firsts: Reply[] = []
    for (const intent of intents) {
      const reply = await bank.send(bank.postSpec(a.customer, intent.path, intent.body, { key }))
      if (reply.status === 409 || reply.status === 422 || isReplay(reply))
        fail(`${intent.what} reused a key this client had used on the other route; routes are separate scopes, so it must execute`, {
          exchange: reply.exchange,
          expected: 'HTTP 201, executed',
          got: `HTTP ${reply.status}${isReplay(reply) ? ' (a replay)' : ''}`,
        })
      expectStatus(reply, 201, `${intent.what} must execute`)
      expectEqual(reply.headers.location?.startsWith(`${intent.path}/`), true, `${intent.what}'s Location points into ${intent.path}`, reply.exchange)
      firsts.push(reply)
    }
    for (const n of ctx.rng.shuffle([0, 1])) {
      const intent = intents[n]!
      expectReplayOf(firsts[n]!, await bank.send(bank.postSpec(a.customer, intent.path, intent.body, { key })), `the retry of ${intent.what}`)
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
  title: "Another client's key never earns a 409, a 422 or a replay: in flight or completed, same body or not",
  points: 6,
  hint: 'Look the key up by (client, route, key) everywhere, in the claim and in every later query: a row of another client must be invisible.',
  timeoutMs: 20_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = (await openParties(ctx, 2)) as [Party, Party]
    // Small amounts: A's four transfers from one account always fit its opening balance (at least ₩100,000).
    const ofA = (): TransferBody => ({ from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 20_000) })
    const ofB = (): TransferBody => ({ from: b.accounts[0]!, to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount(1_000, 20_000) })
    const before = await bank.ledger()
    const fromA: Reply[] = []

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
      const early = bFlight.find((w) => w.reply)
      if (early) crossed(early.reply!, "client B's request, sent while client A's request with the same key was in flight")
    } finally {
      await bank.core({ hold: false })
    }
    for (const [i, w] of aFlight.entries()) {
      fromA.push(await w.promise)
      expectOwnTransfer(fromA.at(-1)!, flight.a[i]!, "client A's held transfer")
    }
    const [bOwn, bCopy] = [await bFlight[0]!.promise, await bFlight[1]!.promise]
    expectOwnTransfer(bOwn, flight.b, "client B's own transfer under client A's key")
    expectCopyRefused(bCopy, "client B's copy of client A's body under client A's key")

    // 2. After A's requests completed, the same again with two new keys.
    const done = { keys: [ctx.rng.uuid(), ctx.rng.uuid()], a: [ofA(), ofA()], b: ofB() }
    for (const [i, key] of done.keys.entries()) {
      fromA.push(await bank.transfer(a.customer, done.a[i]!, { key }))
      expectOwnTransfer(fromA.at(-1)!, done.a[i]!, "client A's transfer")
    }
    for (const n of ctx.rng.shuffle([0, 1])) {
      if (n === 0) {
        const reply = await bank.transfer(b.customer, done.b, { key: done.keys[0] })
        if (reply.status !== 201) crossed(reply, "client B's own transfer under a key client A had completed")
        expectOwnTransfer(reply, done.b, "client B's own transfer under a key client A had completed")
        expectNoLeak(reply, fromA, "client B's transfer")
      } else expectCopyRefused(await bank.transfer(b.customer, done.a[1]!, { key: done.keys[1] }), "client B's copy of client A's completed request")
    }

    const rows = newRows(before, await bank.ledger())
    expectEqual(rows.filter((r) => r.from === a.accounts[0]).length, 4, "client A's four transfers moved money once each")
    expectEqual(rows.filter((r) => r.from === b.accounts[0]).length, 2, "client B's two own transfers moved money once each")

    /** B sent A's exact body: as B's own request it debits A's account, so it executes and is refused 403. */
    function expectCopyRefused(reply: Reply, what: string) {
      if (reply.status !== 403 || isReplay(reply)) crossed(reply, what)
      expectNoLeak(reply, fromA, what)
    }
  },
}

export const stage5: Check[] = [scopePerClient, scopePerRoute, oneRouteAnySpelling, noCrossClientSignal, ...retentionChecks, policyPublished]
