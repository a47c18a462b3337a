// The grader's own answer to stage 0's exercise, written in TypeScript (not
// SQL) so it checks the learner's query instead of repeating it.
import { chownSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '#bank/db.ts'
import type { LedgerEntry } from '#harness/bankClient.ts'
import type { Rng } from '#harness/rng.ts'

export const WINDOW_MS = 60_000

/**
 * Ids of rows that repeat an earlier row (same client, kind, accounts, amount)
 * at most 60 s later; with `atWindow: false`, less than 60 s later.
 */
export function suspectedCopies(entries: LedgerEntry[], { atWindow = true } = {}): string[] {
  const flagged: string[] = []
  entries.forEach((row, i) => {
    const t = Date.parse(row.createdAt)
    const copy = entries
      .slice(0, i)
      .some(
        (e) =>
          e.kind === row.kind &&
          e.clientId === row.clientId &&
          e.from === row.from &&
          e.to === row.to &&
          e.amount === row.amount &&
          (atWindow ? t - Date.parse(e.createdAt) <= WINDOW_MS : t - Date.parse(e.createdAt) < WINDOW_MS) &&
          t >= Date.parse(e.createdAt),
      )
    if (copy) flagged.push(row.id)
  })
  return flagged.sort()
}

/**
 * What a query must flag on a ledger the grade wrote itself, given what it
 * flagged. The grade's checks move the clock in whole minutes, so that ledger
 * can hold a pair exactly 60 s apart, which julianday()'s floating point puts
 * on either side of the window: a row that only such a pair makes a copy may
 * be flagged or not. Every other row must be as the window says.
 */
export function copiesToFlag(entries: LedgerEntry[], flagged: string[]): string[] {
  const surely = suspectedCopies(entries, { atWindow: false })
  const atWindowOnly = suspectedCopies(entries).filter((id) => !surely.includes(id))
  return [...surely, ...flagged.filter((id) => atWindowOnly.includes(id))].sort()
}

/**
 * A ledger with copies at random gaps inside the window, honest repeats
 * outside it, near misses (another amount, another account, another kind) and
 * the boundary cases at 59 and 61 seconds. Every case is in every ledger, so
 * no seed leaves a wrong query unseen (deposits matched with `=`, a 30 s
 * window, `to_account` left out). Never a pair exactly 60 s apart:
 * julianday()'s floating point puts it on either side of 60.0 / 86400 (about
 * 1 in 11 outside), so a correct query could go either way.
 */
/** A ledger of copies and near-copies, in a SQLite file under `folder` (the grade's data folder: the learner's query runs there). */
export function craftLedger(rng: Rng, folder: string) {
  const dir = mkdtempSync(join(folder, 'ledger-'))
  const path = join(dir, 'crafted.sqlite')
  const db = openDatabase(path)
  const clients = ['cl_a', 'cl_b']
  for (const c of clients) db.prepare("INSERT INTO clients VALUES (?, ?, ?, '2026-01-01T00:00:00.000Z')").run(c, c, `hash-${c}`)
  const accounts = ['acc_1', 'acc_2', 'acc_3', 'acc_4']
  accounts.forEach((a, i) => db.prepare("INSERT INTO accounts VALUES (?, ?, 0, 0, '2026-01-01T00:00:00.000Z')").run(a, clients[i % 2]))
  const rows: Array<Omit<LedgerEntry, 'id' | 'createdAt'> & { at: number }> = []
  let clock = Date.parse('2026-03-14T09:00:00.000Z')
  const add = (row: Omit<LedgerEntry, 'id' | 'createdAt'>, at: number) => rows.push({ ...row, at })
  const cases = [...rng.shuffle([0, 1, 2, 3, 4]), ...Array.from({ length: 7 }, () => rng.int(0, 5))]
  for (const which of cases) {
    clock += rng.int(5, 30) * 60_000
    const from = rng.pick(['acc_1', 'acc_3'])
    const clientId = from === 'acc_1' ? 'cl_a' : 'cl_b'
    const base = { kind: 'transfer', clientId, from, to: rng.pick(['acc_2', 'acc_4']), amount: rng.amount() }
    add(base, clock)
    switch (which) {
      case 0: // a retry: a copy a few seconds later, sometimes two
        add(base, clock + rng.int(1, 30) * 1_000)
        if (rng.chance(0.5)) add(base, clock + rng.int(31, 59) * 1_000)
        break
      case 1: // an honest repeat: the same payment, hours later
        add(base, clock + rng.int(2, 9) * 3_600_000)
        break
      case 2: // near misses inside the window
        add({ ...base, amount: base.amount + 100 }, clock + 2_000)
        add({ ...base, to: base.to === 'acc_2' ? 'acc_4' : 'acc_2' }, clock + 3_000)
        break
      case 3: // the boundaries
        add(base, clock + 59_000)
        add({ ...base, amount: base.amount + 1 }, clock + 1_000)
        add({ ...base, amount: base.amount + 1 }, clock + 62_000)
        break
      case 4: // deposits have no source account; a copy is still a copy
        add({ kind: 'deposit', clientId, from: null, to: from, amount: base.amount }, clock + 1_000)
        add({ kind: 'deposit', clientId, from: null, to: from, amount: base.amount }, clock + 4_000)
        break
      default:
        break
    }
  }
  rows.sort((x, y) => x.at - y.at)
  const insert = db.prepare('INSERT INTO ledger (id, kind, client_id, from_account, to_account, amount, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  const entries: LedgerEntry[] = rows.map((r, i) => {
    const entry = {
      id: `tr_${String(i).padStart(4, '0')}`,
      kind: r.kind,
      clientId: r.clientId,
      from: r.from,
      to: r.to,
      amount: r.amount,
      createdAt: new Date(r.at).toISOString(),
    }
    insert.run(entry.id, entry.kind, entry.clientId, entry.from, entry.to, entry.amount, entry.createdAt)
    return entry
  })
  db.close()
  // The learner's query opens it as the grade's servers run: as the data
  // folder's owner (nobody, when a root grader runs them so: harness/isolation.ts),
  // who must enter the folder and write SQLite's -shm file beside it.
  const owner = statSync(folder)
  if (process.getuid && owner.uid !== process.getuid()) for (const made of [dir, path]) chownSync(made, owner.uid, owner.gid)
  return { path, entries, dispose: () => rmSync(dir, { recursive: true, force: true }) }
}
