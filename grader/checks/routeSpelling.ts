// One route, however the URL is spelled. Express matches routes without
// regard to case and ignores a trailing slash, so /transfers, /TRANSFERS and
// /transfers/ all reach the one transfer handler. A layer that scopes keys by
// the URL as typed (op.path, or req.path in a framework's middleware) gives
// each spelling its own key space: a retry that a client library or proxy
// re-spelled moves the money again. The bank names the route for the layer
// (op.route), the same for every spelling.
import { expectEqual, fail, type Check } from '../engine/check.ts'
import { phrases } from '#harness/i18n/phrase.ts'
import type { Reply } from '#harness/http.ts'
import { expectConsistent, newRows, openParties } from './setup.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": routeSpelling.<key>).
const say = phrases('routeSpelling', {
  movedTimes:
    'one key and one body sent to {paths} moved money {rows} times{executed}. Express routes every spelling to the same handler, so they are one route: scope the key by the route (op.route), not by the URL as typed (op.path)',
  executed: '; these spellings executed: {spellings}',
  oneRow: '1 ledger row: every spelling is POST /transfers, and the key was the same',
  rows: '{rows} ledger rows',
  debitedOnce: 'the debited account moved by the amount once',
  note: 'one key on {paths}: one transfer of ₩{amount}',
})

/** The spellings Express routes to POST /transfers. */
export const TRANSFER_SPELLINGS = ['/transfers', '/TRANSFERS', '/transfers/', '/Transfers', '/TRANSFERS/']

export const oneRouteAnySpelling: Check = {
  id: 'one-route-any-spelling',
  title: 'One key sent to /transfers, /TRANSFERS, /transfers/, /Transfers and /TRANSFERS/ moves the money once',
  points: 4,
  hint: "Scope keys by op.route, the bank's name for the route (POST /transfers for every spelling), never by the path as the client typed it (op.path).",
  timeoutMs: 15_000,
  async run(ctx) {
    const { bank } = ctx
    const [a, b] = await openParties(ctx, 2)
    const key = ctx.rng.uuid()
    const body = { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000) }
    const before = await bank.ledger()
    const sent: Array<{ path: string; reply: Reply }> = []
    for (const path of ctx.rng.shuffle(TRANSFER_SPELLINGS)) sent.push({ path, reply: await bank.send(bank.postSpec(a.customer, path, body, { key })) })

    const after = await bank.ledger()
    const rows = newRows(before, after)
    if (rows.length !== 1) {
      const executed = sent.filter((s) => rows.some((r) => r.id === s.reply.json?.id))
      fail(
        say('movedTimes', {
          paths: sent.map((s) => s.path).join(', '),
          rows: rows.length,
          executed:
            executed.length > 0 ? say('executed', { spellings: executed.map((s) => `${s.path} (HTTP ${s.reply.status}, ${s.reply.json.id})`).join(', ') }) : '',
        }),
        {
          exchange: (executed[1] ?? sent.at(-1)!).reply.exchange,
          expected: say('oneRow'),
          got: say('rows', { rows: rows.length }),
        },
      )
    }
    const balance = (id: string, ledger: typeof before) => ledger.accounts.find((x) => x.id === id)!.balance
    expectEqual(balance(body.from, before) - balance(body.from, after), body.amount, say('debitedOnce'))
    expectConsistent(after)
    ctx.note(say('note', { paths: sent.map((s) => s.path).join(', '), amount: body.amount }))
  },
}
