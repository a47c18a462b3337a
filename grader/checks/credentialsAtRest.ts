// Stage 1 on: no credential at rest in the layer's tables. Every
// Operation carries the request's headers (op.headers), Authorization among
// them; the bank itself keeps only a hash of each API key. A layer that stores
// the headers (a debugging column, a "request" JSON next to the response)
// stores the client's API key in clear, readable by anyone who reads the key
// table or a backup of it. White box (needs: 'database'): the grader reads
// every cell of every layer table, on SQLite or PostgreSQL (layerDatabase.ts).
import { type Line, listOf, phrases } from '#harness/i18n/phrase.ts'
import type { BankClient } from '#harness/bankClient.ts'
import type { RequestSpec } from '#harness/http.ts'
import { fail, type Check } from '../engine/check.ts'
import { withLayerStore } from './layerDatabase.ts'
import { openParties } from './setup.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": credentialsAtRest.<key>).
const say = phrases('credentialsAtRest', {
  bearerLabel: "the client's Authorization header (Bearer and its API key)",
  apiKeyLabel: "the client's API key",
  adminLabel: 'the admin token (LAB_ADMIN_TOKEN)',
  holdsOne: '{column} holds {secret} (1 row)',
  holdsMany: '{column} holds {secret} ({rows} rows)',
  atRest: 'a credential at rest: {found}. The bank stores only a hash of API keys; a layer must store no header but what a retry needs (never op.headers)',
  noCredentialCell: 'no cell of a layer table holding an API key, an Authorization header or the admin token',
  note: '{statuses}; {cells} cell(s) in {tables} layer table(s) read: no credential',
})

/** One cell of a layer table, by table and column. */
export type Cell = { table: string; column: string; value: unknown }

/** A credential the layer must not keep, and what to call it in a report. */
export type Secret = { value: string; label: Line }

/** Every non-null cell of every table of the layer (every table but the bank's own). */
export async function layerCells(bank: BankClient): Promise<Cell[]> {
  return withLayerStore(bank, async (store) => {
    const cells: Cell[] = []
    for (const table of await store.tables())
      for (const row of await store.rows(table)) for (const [column, value] of Object.entries(row)) if (value !== null) cells.push({ table, column, value })
    return cells
  })
}

const MAX_NESTING = 8

/**
 * The texts a cell holds: the text itself (a blob read as UTF-8, a JSON
 * column as written), and, when it is JSON, every string and member name
 * inside it, unescaped (`\u0073k_…` is `sk_…`), a string holding JSON in turn.
 */
export function cellTexts(value: unknown, depth = 0): string[] {
  if (value === null || value === undefined || value instanceof Date) return []
  if (value instanceof Uint8Array) return cellTexts(Buffer.from(value).toString('utf8'), depth)
  if (typeof value === 'string') {
    const texts = [value]
    if (depth < MAX_NESTING && /^\s*[[{"]/.test(value))
      try {
        texts.push(...inside(JSON.parse(value), depth + 1))
      } catch {
        // not JSON: the text alone
      }
    return texts
  }
  if (typeof value === 'object') return [JSON.stringify(value), ...inside(value, depth + 1)]
  return [String(value)]
}

function inside(parsed: unknown, depth: number): string[] {
  if (typeof parsed === 'string') return cellTexts(parsed, depth)
  if (depth > MAX_NESTING || parsed === null || typeof parsed !== 'object') return []
  return Object.entries(parsed).flatMap(([name, v]) => [...(Array.isArray(parsed) ? [] : [name]), ...inside(v, depth + 1)])
}

/** Where each secret sits: one finding per table, column and secret (the first secret of the list a cell holds). */
export function findSecrets(cells: Cell[], secrets: Secret[]): Array<{ table: string; column: string; secret: Secret; rows: number }> {
  const found = new Map<string, { table: string; column: string; secret: Secret; rows: number }>()
  for (const cell of cells) {
    const texts = cellTexts(cell.value)
    // The most specific first: "Bearer <key>" is the Authorization header, which holds the key too.
    const secret = secrets.find((s) => texts.some((t) => t.includes(s.value)))
    if (!secret) continue
    const id = `${cell.table}\0${cell.column}\0${secret.label}`
    const seen = found.get(id)
    if (seen) seen.rows++
    else found.set(id, { table: cell.table, column: cell.column, secret, rows: 1 })
  }
  return [...found.values()]
}

/** Enough of a secret to recognise it in a report, not enough to use it. */
const masked = (secret: string) => `${secret.slice(0, 7)}…`

const noCredentialsAtRest: Check = {
  id: 'no-credentials-at-rest',
  title: "No credential at rest: the layer's tables never hold the client's API key, its Authorization header or the admin token",
  points: 3,
  hint: 'Store what a retry needs (the key, its scope, the fingerprint, the response) and nothing else: never op.headers, which carries Authorization. The bank keeps only a hash of each API key; a copy of the header in a key row is the key in clear.',
  timeoutMs: 20_000,
  needs: 'database',
  async run(ctx) {
    const { bank } = ctx
    const [a] = await openParties(ctx, 1, 2)
    const { apiKey } = a.customer
    const [from, to] = a.accounts as [string, string]
    // Each route, each request retried (the replay is stored from stage 4 on), one of them refused for want of money (a stored 402).
    const sends: Array<{ spec: RequestSpec; copies: number }> = [
      {
        spec: bank.postSpec(a.customer, '/transfers', { from, to, amount: ctx.rng.amount(1_000, 50_000) }, { key: ctx.rng.uuid() }),
        copies: ctx.rng.int(2, 3),
      },
      {
        spec: bank.postSpec(a.customer, '/deposits', { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() }, { key: ctx.rng.uuid() }),
        copies: ctx.rng.int(2, 3),
      },
      { spec: bank.postSpec(a.customer, '/transfers', { from: to, to: from, amount: 900_000_000_000 }, { key: ctx.rng.uuid() }), copies: 2 },
    ]
    const statuses: string[] = []
    for (const { spec, copies } of ctx.rng.shuffle(sends)) {
      const replies = []
      for (let i = 0; i < copies; i++) replies.push((await bank.send(spec)).status)
      statuses.push(`${spec.path} ${replies.join('/')}`)
    }
    const secrets: Secret[] = [
      { value: `Bearer ${apiKey}`, label: say('bearerLabel') },
      { value: apiKey, label: say('apiKeyLabel') },
      { value: bank.adminToken, label: say('adminLabel') },
    ]
    const cells = await layerCells(bank)
    const found = findSecrets(cells, secrets)
    if (found.length > 0)
      fail(
        say('atRest', {
          found: listOf(
            found.map((f) =>
              f.rows === 1
                ? say('holdsOne', { column: `${f.table}.${f.column}`, secret: f.secret.label })
                : say('holdsMany', { column: `${f.table}.${f.column}`, secret: f.secret.label, rows: f.rows }),
            ),
            'semicolon',
          ),
        }),
        {
          expected: say('noCredentialCell'),
          got: found.map((f) => `${f.table}.${f.column}: ${masked(f.secret.value)}`).join(', '),
        },
      )
    const tables = new Set(cells.map((c) => c.table))
    ctx.note(say('note', { statuses: statuses.join(', '), cells: cells.length, tables: tables.size }))
  },
}

export const credentialChecks: Check[] = [noCredentialsAtRest]
