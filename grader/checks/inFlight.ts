// What stage 3's checks share: requests held in flight, and the verdicts on
// them (answered at once or let into the core; moved money exactly once).
import { phrases } from '#harness/i18n/phrase.ts'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BankClient, Ledger, TransferBody } from '#harness/bankClient.ts'
import { expectEqual, fail, type CheckContext } from '../engine/check.ts'
import type { Reply } from '#harness/http.ts'
import { newRows, type Party } from './setup.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": inFlight.<key>).
const say = phrases('inFlight', {
  waitingInLayer: 'after {ms} ms the duplicate(s) had neither been answered nor reached the core: they are waiting in the layer for the first request',
  answerAtOnce: 'an answer at once (409 or 422), without waiting for the first request',
  neverMoved: 'the transfer never moved any money',
  oneRow: '1 ledger row',
  zeroRows: '0 rows',
  movedTimes: 'one intent (one Idempotency-Key) moved the money {rows} times',
  rowCarriesAmount: 'the ledger row carries the requested amount',
  namesLedgerRow: 'the 201 names the transfer that is in the ledger',
})

/** A request whose reply may come much later (or never, if the server is killed): handled now, awaited later. */
export function pending(reply: Promise<Reply>): Promise<Reply> {
  reply.catch(() => undefined) // the check awaits it later, or gives up on it on purpose
  return reply
}

/**
 * Holds the core shut, sends one request and waits until it sits inside the
 * core: past its claim, provably in flight. The caller releases the core.
 */
export async function holdInCore(bank: BankClient, send: () => Promise<Reply>): Promise<{ reply: Promise<Reply> }> {
  await bank.core({ hold: true })
  const reply = pending(send())
  await bank.waitForInflight(1, 15_000) // a loaded machine can take seconds to get one request there
  return { reply } // wrapped: an async function would otherwise wait for the held reply itself
}

/**
 * While the core is held, a request sent to the layer either answers (the
 * layer refused to execute it) or reaches the core and stays there (the layer
 * let it execute). Polls both until one of them is certain.
 */
export async function answeredOrInCore(
  bank: BankClient,
  replies: Promise<Reply[]>,
  alreadyInCore: number,
  timeoutMs = 8_000,
): Promise<{ answered: Reply[] } | { reachedCore: number }> {
  let answered: Reply[] | undefined
  const all = replies.then((r) => (answered = r))
  all.catch(() => undefined) // a failed request surfaces in the race below
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (answered) return { answered }
    const { inflight } = await bank.core({})
    if (inflight > alreadyInCore) return { reachedCore: inflight - alreadyInCore }
    if (Date.now() > deadline)
      fail(say('waitingInLayer', { ms: timeoutMs }), {
        expected: say('answerAtOnce'),
      })
    await Promise.race([all, sleep(20)])
  }
}

/**
 * One transfer's worth of random inputs: who pays, what, under which key. All
 * from the payer's first account, at most ₩90,000 each: ten of them fit the
 * smallest opening balance (SMALLEST_OPENING, setup.ts).
 */
export function plan(ctx: CheckContext, a: Party, b: Party): { body: TransferBody; key: string } {
  return { body: { from: a.accounts[0]!, to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(1_000, 90_000) }, key: ctx.rng.uuid() }
}

/** After everything settled: the intent moved money exactly once, and any 201 names that one row. */
export async function expectExactlyOnce(bank: BankClient, before: Ledger, body: TransferBody, winner?: Reply) {
  const rows = newRows(before, await bank.ledger()).filter((e) => e.from === body.from && e.to === body.to)
  if (rows.length === 0) fail(say('neverMoved'), { exchange: winner?.exchange, expected: say('oneRow'), got: say('zeroRows') })
  if (rows.length > 1)
    fail(say('movedTimes', { rows: rows.length }), {
      exchange: winner?.exchange,
      expected: say('oneRow'),
      got: rows.map((r) => `${r.id} ₩${r.amount}`).join(', '),
    })
  expectEqual(rows[0]!.amount, body.amount, say('rowCarriesAmount'))
  if (winner?.status === 201) expectEqual(winner.json?.id, rows[0]!.id, say('namesLedgerRow'), winner.exchange)
}
