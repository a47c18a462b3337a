// Stage 6: transfers that contend for the same accounts, on PostgreSQL.
//
// Whether two transactions on one row collide is a matter of timing, unless
// the grader makes them collide: it locks the two accounts' rows itself, lets
// every held transfer out of the core, waits until each one's money
// transaction is queued behind that lock, and only then lets go. Every
// transaction then started before the first of them committed, so at READ
// COMMITTED (the bank's) each re-reads the row and goes on, and at
// SERIALIZABLE or REPEATABLE READ every one but the first fails with 40001,
// on every run.
import { expectEqual, fail, type Check } from '../engine/check.ts'
import { phrases } from '#harness/i18n/phrase.ts'
import { pending } from './inFlight.ts'
import { connectToDatabase, lockWaiters } from './layerDatabase.ts'
import { newRows, openParties } from './setup.ts'
import { moreInstances, waitFor } from './stage6Instances.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage6Contention.<key>).
const say = phrases('stage6Contention', {
  transfers: 'transfers',
  reachedCore: 'reached the core',
  queued: 'queued for the accounts',
  failedAfterWaiting: '{failed} of {total} transfers between the same two accounts failed once they had waited for each other',
  allCreated: 'HTTP 201 for all {total}',
  rows: '{total} transfers with distinct keys, {total} ledger rows',
})

const contendedAccounts: Check = {
  id: 'contended-accounts-all-execute',
  title: 'Transfers with distinct keys between the same two accounts, on three instances at once, all execute',
  points: 10,
  hint: 'A transfer that waited for another one on the same account must then go on, not fail. The bank moves money at READ COMMITTED with the rows locked FOR UPDATE; at SERIALIZABLE (or REPEATABLE READ) PostgreSQL aborts the later ones with SQLSTATE 40001, and a 40001 must be retried, never returned as a 500.',
  timeoutMs: 90_000,
  // It locks the accounts' rows itself, on the grade's database.
  needs: 'database',
  async run(ctx) {
    const banks = [ctx.bank, ...(await moreInstances(ctx, 2))]
    const [a, b] = await openParties(ctx, 2)
    const [from, to] = [a.accounts[0]!, b.accounts[0]!]
    // At most 3 × 3 of at most ₩12,000 from one account: they fit SMALLEST_OPENING (setup.ts).
    const transfers = banks.flatMap((bank) =>
      Array.from({ length: ctx.rng.int(2, 3) }, () => ({ bank, body: { from, to, amount: ctx.rng.amount(1_000, 12_000) }, key: ctx.rng.uuid() })),
    )
    const before = await ctx.bank.ledger()
    const locker = await connectToDatabase(ctx.bank)
    const watcher = await connectToDatabase(ctx.bank)
    let answered = 0
    const release = () => Promise.all(banks.map((bank) => bank.core({ hold: false })))
    try {
      await Promise.all(banks.map((bank) => bank.core({ hold: true })))
      await locker.query('BEGIN')
      await locker.query('SELECT 1 FROM accounts WHERE id = ANY($1) FOR UPDATE', [[from, to]])
      const replies = transfers.map(({ bank, body, key }) =>
        pending(
          bank.transfer(a.customer, body, { key }).then((reply) => {
            answered++
            return reply
          }),
        ),
      )
      await waitFor(
        transfers.length,
        say('transfers'),
        say('reachedCore'),
        async () => answered + (await Promise.all(banks.map((bank) => bank.core({})))).reduce((n, s) => n + s.inflight, 0),
      )
      await release()
      await waitFor(transfers.length, say('transfers'), say('queued'), async () => answered + (await lockWaiters(watcher)))
      await locker.query('COMMIT')
      const failed = (await Promise.all(replies)).filter((r) => r.status !== 201)
      if (failed.length)
        fail(say('failedAfterWaiting', { failed: failed.length, total: transfers.length }), {
          exchange: failed[0]!.exchange,
          expected: say('allCreated', { total: transfers.length }),
          got: failed.map((r) => `HTTP ${r.status}`).join(', '),
        })
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined)
      await Promise.all([locker.end(), watcher.end()])
      await release().catch(() => undefined)
    }
    const rows = newRows(before, await ctx.bank.ledger()).filter((e) => e.from === from && e.to === to)
    expectEqual(rows.length, transfers.length, say('rows', { total: transfers.length }))
  },
}

export const stage6Contention: Check[] = [contendedAccounts]
