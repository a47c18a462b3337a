// The grader's own answer to stage 0's exercise at the edge of its window. The
// grade's checks move the clock in whole minutes, so its live ledger can hold
// two rows exactly 60 s apart; julianday() puts such a pair on either side of
// 60.0 / 86400, and the check must accept either answer for that row only.
import { describe, it } from 'vitest'
import { copiesToFlag, suspectedCopies } from '#grader/checks/suspectedDuplicates.ts'
import type { LedgerEntry } from '#harness/bankClient.ts'
import { openDatabase } from '#bank/db.ts'
import { SUSPECTED_DUPLICATES_SQL } from '../solutions/00-unprotected/suspectedDuplicates.ts'

const T0 = Date.parse('2026-03-01T09:00:00.000Z')
const deposit = (id: string, atMs: number, amount = 10_000): LedgerEntry => ({
  id,
  kind: 'deposit',
  clientId: 'c1',
  from: null,
  to: 'acc-1',
  amount,
  createdAt: new Date(T0 + atMs).toISOString(),
})

// Three pairs: 59 s apart (a copy), exactly 60 s (either way), 61 s (no copy).
const ledger = [
  deposit('a1', 0, 100),
  deposit('a2', 59_000, 100),
  deposit('b1', 0, 200),
  deposit('b2', 60_000, 200),
  deposit('c1', 0, 300),
  deposit('c2', 61_000, 300),
]

describe('suspected copies at the window edge', () => {
  it('counts a pair exactly 60 s apart inside the window, and outside it with atWindow: false', ({ expect }) => {
    expect(suspectedCopies(ledger)).toEqual(['a2', 'b2'])
    expect(suspectedCopies(ledger, { atWindow: false })).toEqual(['a2'])
  })

  it('accepts either answer for the row exactly at the window, and nothing else', ({ expect }) => {
    expect(copiesToFlag(ledger, ['a2', 'b2'])).toEqual(['a2', 'b2'])
    expect(copiesToFlag(ledger, ['a2'])).toEqual(['a2'])
    // A missed copy or a flagged honest repeat is still named.
    expect(copiesToFlag(ledger, ['b2'])).toEqual(['a2', 'b2'])
    expect(copiesToFlag(ledger, ['a2', 'c2'])).toEqual(['a2'])
  })

  it('has a reason: the reference query puts some exact 60 s pairs outside the window', ({ expect }) => {
    // Over many start instants, julianday()'s rounding leaves some exact pairs out.
    const db = openDatabase(':memory:') // the bank's own tables, ledger included
    const insert = db.prepare('INSERT INTO ledger (id, kind, client_id, from_account, to_account, amount, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    for (let i = 0; i < 200; i++) {
      const start = T0 + i * 1_237
      insert.run(`x${i}`, 'deposit', 'c1', null, 'acc-1', 1_000 + i, new Date(start).toISOString())
      insert.run(`y${i}`, 'deposit', 'c1', null, 'acc-1', 1_000 + i, new Date(start + 60_000).toISOString())
    }
    const flagged = (db.prepare(SUSPECTED_DUPLICATES_SQL).all() as Array<{ id: string }>).length
    db.close()
    expect(flagged).toBeGreaterThan(0)
    expect(flagged).toBeLessThan(200)
  })
})
