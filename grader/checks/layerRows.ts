// What the idempotency layer keeps in the bank's database, counted by the
// grader itself (white box: checks with `needs: 'database'`). The layer's
// tables, the rows holding a key and the connection to either store are
// layerDatabase.ts's.
import type { BankClient } from '#harness/bankClient.ts'
import { type Line, phrases } from '#harness/i18n/phrase.ts'
import { withLayerStore } from './layerDatabase.ts'

// What this module tells a learner, as a template the packs translate (i18n/<lang>.json, "messages": layerRows.<key>).
const say = phrases('layerRows', { noTables: 'no tables' })

/**
 * Rows per table of the layer; with `mentioning`, only the rows holding that
 * text (a key as it was sent, in whatever column or composite value holds it).
 */
export async function layerRows(bank: BankClient, mentioning?: string): Promise<Record<string, number>> {
  return withLayerStore(bank, async (store) => {
    const counts: Record<string, number> = {}
    for (const table of await store.tables()) counts[table] = await store.count(table, mentioning)
    return counts
  })
}

export const totalRows = (rows: Record<string, number>) => Object.values(rows).reduce((s, n) => s + n, 0)

export const describeRows = (rows: Record<string, number>): Line =>
  Object.entries(rows)
    .map(([t, n]) => `${t}: ${n}`)
    .join(', ') || say('noTables')
