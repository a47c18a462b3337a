// Stage 3, white box: what the key's row holds after each transition, read
// from the database file through a read-only connection of our own (so only
// committed state is seen, as another server process would see it).
//
// No column names are assumed. The row is the one that holds the key we sent
// (as the whole value or inside a composite one). The owner is found by what
// changes when a retry takes an expired claim over: a value that is not a
// clock reading (the lease, the claim time) but names who holds the claim.
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { expectStatus, fail, type Check } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'
import { firstOutside, momentOf } from './timeline.ts'
import { openParties, periodBank } from './setup.ts'
import { answeredOrInCore, holdInCore, pending, plan } from './inFlight.ts'
import { notJudgedWithoutTakeover } from './leases.ts'
import { keyRowState, type LayerRow } from './layerDatabase.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": keyRowStates.<key>).
const say = phrases('keyRowStates', {
  noRowInFlight:
    'while the first request was in the core, no row of the layer held its key ({key}): the claim must be committed on its own, before the transfer, so that every process sees it',
  mustTakeOver: 'after the lease ran out, a retry must take the claim over and execute',
  waitsInCore: 'the retry waits in the core (it took the claim over)',
  takeoverExecutes: 'the retry that took the claim over executes',
  rowGone: "after the takeover, the key's row in {table} was gone",
  rowUnchanged: "a retry took the expired claim over, but the key's row in {table} did not change: nothing records the new owner or its lease",
  noCompletedRow: 'after the transfer completed, no row holds its key ({key}): the completed key must be kept',
  ownerKept: "the completed key's row still names the request that held it ({cells}): completing releases the owner",
  clearedOnCompletion: "{columns} cleared when the key completes, in the money's transaction",
  core503: 'the core was told to fail this call: the bank answers 503',
  ownedAfter503: "after a 503 the key's row still names the failed request as its owner: release the claim (delete the row) so a retry runs at once",
  noneButLease: '(none but the lease)',
  keptUnowned: 'kept, unowned',
  gone: 'gone',
  rowNote: 'table {table}; takeover changed {changed}; owner {owner}; after a 503 the row is {after}',
})

type Snapshot = LayerRow | undefined

const show = (v: unknown) => (Buffer.isBuffer(v) ? `x'${v.toString('hex')}'` : JSON.stringify(v))

const DAY_MS = 86_400_000
/** A clock reading of about now: ms or s since the epoch, a Julian day, or a date string. */
function isClock(value: unknown, now: number): boolean {
  const near = (ms: number) => Math.abs(ms - now) < 2 * DAY_MS
  if (typeof value === 'number' || typeof value === 'bigint') {
    const n = Number(value)
    return near(n) || near(n * 1000) || near((n - 2_440_587.5) * DAY_MS)
  }
  return typeof value === 'string' && !/^[0-9a-f-]{32,}$/i.test(value) && near(Date.parse(value))
}

const isEmpty = (v: unknown) => v === null || v === ''

/** The lease on a real clock (on a controlled one, the default: periodBank). */
const LEASE_MS = 800

/** Every property of the row (an owner, a lease, released at completion) is the course's lease convention, beyond draft-07. */
function rowFail(message: Line, details?: Parameters<typeof fail>[1]): never {
  return fail(courseRule('lease', message), details)
}

const keyRowStates: Check = {
  id: 'key-row-states',
  title: "The key's row, read from the database: committed at the claim, re-owned at a takeover, owner released at completion and at a 5xx",
  points: 4,
  hint: "Commit the in_progress row (owner, lease) before the money moves; a takeover writes the new owner; completing clears the owner (and lease) in the money's transaction; a 5xx deletes the row.",
  timeoutMs: 40_000,
  needs: 'sqlite-file',
  timed: true,
  async run(ctx) {
    const { bank, leaseMs } = await periodBank(ctx, { leaseMs: LEASE_MS })
    const { dbPath } = bank.server.options
    const [a, b] = await openParties(ctx, 2, 2, bank)
    const { body, key } = plan(ctx, a, b)
    const send = (k: string) => pending(bank.transfer(a.customer, { ...body }, { key: k }))
    let takeover: Reply
    let claimed: Snapshot
    let retaken: Snapshot
    try {
      const { at: claim, value: held } = await momentOf(ctx.clock, () => holdInCore(bank, () => send(key)))
      claimed = keyRowState(dbPath, key)
      if (!claimed) rowFail(say('noRowInFlight', { key }))
      const endAt = firstOutside(ctx.clock, claim, leaseMs, leaseMs / 4)
      await ctx.clock.moveTo(endAt)
      const retry = send(key)
      const seen = await answeredOrInCore(
        bank,
        retry.then((r) => [r]),
        1,
      )
      // No takeover, no re-owned row to read.
      if ('answered' in seen) {
        if (seen.answered[0]!.status === 409) await notJudgedWithoutTakeover(ctx, bank, claim, leaseMs, endAt, () => send(key), [held.reply, retry])
        rowFail(say('mustTakeOver'), {
          exchange: seen.answered[0]!.exchange,
          expected: say('waitsInCore'),
          got: `HTTP ${seen.answered[0]!.status}`,
        })
      }
      retaken = keyRowState(dbPath, key)
      await bank.core({ hold: false })
      ;[, takeover] = await Promise.all([held.reply, retry])
    } finally {
      await bank.core({ hold: false })
    }
    expectStatus(takeover, 201, say('takeoverExecutes'))
    if (!retaken || retaken.table !== claimed.table) rowFail(say('rowGone', { table: claimed.table }))
    // A clock reading in the row is one of the grade's clock, which may be far from the host's.
    const now = ctx.clock.now()
    const changed = Object.keys(retaken.row).filter((c) => show(retaken.row[c]) !== show(claimed.row[c]))
    if (changed.length === 0)
      rowFail(say('rowUnchanged', { table: claimed.table }), {
        got: Object.entries(retaken.row)
          .map(([c, v]) => `${c}=${show(v)}`)
          .join(', '),
      })
    // The owner: what the takeover changed that is not a clock reading. A design
    // that fences with the lease time alone has none, and is judged by its row only.
    const owners = changed.filter((c) => !isEmpty(retaken.row[c]) && !isClock(retaken.row[c], now) && !isClock(claimed.row[c], now))

    const completed = keyRowState(dbPath, key)
    if (!completed) rowFail(say('noCompletedRow', { key }))
    const kept = owners.filter((c) => show(completed.row[c]) === show(retaken.row[c]))
    if (kept.length)
      rowFail(say('ownerKept', { cells: kept.map((c) => `${c}=${show(completed.row[c])}`).join(', ') }), {
        expected: say('clearedOnCompletion', { columns: kept.join(', ') }),
        got: Object.entries(completed.row)
          .map(([c, v]) => `${c}=${show(v)}`)
          .join(', '),
      })

    // A 5xx: the row is gone, or holds no owner any more.
    const failedKey = ctx.rng.uuid()
    await bank.core({ failNext: 1 })
    try {
      expectStatus(await send(failedKey), 503, say('core503'))
    } finally {
      await bank.core({ failNext: 0 })
    }
    const released = keyRowState(dbPath, failedKey)
    const stillOwned = released ? owners.filter((c) => !isEmpty(released.row[c])) : []
    if (stillOwned.length)
      rowFail(say('ownedAfter503'), {
        got: Object.entries(released!.row)
          .map(([c, v]) => `${c}=${show(v)}`)
          .join(', '),
      })
    ctx.note(
      say('rowNote', {
        table: claimed.table,
        changed: changed.join(', '),
        owner: owners.join(', ') || say('noneButLease'),
        after: say(released ? 'keptUnowned' : 'gone'),
      }),
    )
  },
}

export const rowChecks: Check[] = [keyRowStates]
