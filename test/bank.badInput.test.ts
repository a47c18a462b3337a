// The bad-input corpus, one table of cases run against both stores: the
// bank (bank/app.ts) on SQLite with the stage 0 layer, and on PostgreSQL
// (bank/pg/store.ts) with stage 6's layer, on an embedded PostgreSQL started
// for this file. For every case both banks answer the status and problem type
// the table says, the same on both; no case is ever a 5xx, and none changes a
// balance, a ledger row, a client or the core simulator. It includes what
// PostgreSQL cannot store and SQLite can (U+0000, lone surrogates: see
// bank/storableText.ts), in every field, in the path and in the key header.
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repeatedKeyProblem } from '#bank/keyLines.ts'
import type { BankClient, Customer, Ledger } from '#harness/bankClient.ts'
import type { Exchange } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import type { PgDatabase, PgServer } from '#harness/postgres.ts'
import { runPostgres } from './helpers/postgres.ts'
import { customerWith, startBank, type TestBank } from './helpers/bank.ts'
import { asExchange, rawRequest, sendRaw } from './helpers/rawHttp.ts'
import { scratchDir } from './helpers/scratch.ts'

const MAX_AMOUNT = 1_000_000_000_000
const scratch = scratchDir('bad-input')
const seen: Exchange[] = []

/** One bank under test, and what the cases need of it. */
type Store = {
  name: 'sqlite' | 'postgres'
  tb: TestBank
  bank: BankClient
  alice: { customer: Customer; accounts: string[] }
  /** alice's first account and bob's. */
  A: string
  B: string
  port: number
  countClients(): Promise<number>
  before?: { ledger: Ledger; clients: number }
}

let server: PgServer | undefined
let database: PgDatabase | undefined
const stores: Store[] = []
/** How long starting PostgreSQL and the stage 6 bank on it took (the rest of the PostgreSQL part is in the cases). */
let pgSetupMs = 0

async function store(name: Store['name'], tb: TestBank, countClients: () => Promise<number>): Promise<Store> {
  const alice = await customerWith(tb.bank, 1_000_000, 50_000)
  const bob = await customerWith(tb.bank, 300_000)
  return { name, tb, bank: tb.bank, alice, A: alice.accounts[0]!, B: bob.accounts[0]!, port: Number(new URL(tb.bank.url).port), countClients }
}

beforeAll(async () => {
  const record = (e: Exchange) => seen.push(e)
  const sqlite = await startBank(scratch.path, { record })
  stores.push(
    await store('sqlite', sqlite, async () => {
      const db = new Database(sqlite.server.options.dbPath, { readonly: true, fileMustExist: true })
      try {
        return (db.prepare('SELECT count(*) AS n FROM clients').get() as { n: number }).n
      } finally {
        db.close()
      }
    }),
  )
  const started = performance.now()
  server = await runPostgres()
  database = await server.createDatabase()
  const url = database.url
  const onPg = await startBank(scratch.path, { record, stageDir: resolve(repoRoot, 'solutions', '06-production'), env: { LAB_DATABASE_URL: url } })
  stores.push(
    await store('postgres', onPg, async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM clients')).rows[0]!.n)
      } finally {
        await client.end()
      }
    }),
  )
  pgSetupMs = performance.now() - started
  for (const s of stores) s.before = { ledger: await s.bank.ledger(), clients: await s.countClients() }
}, 120_000)

afterAll(async () => {
  // Each step whatever the others did: the PostgreSQL server is stopped even when a bank or a drop failed.
  const steps = await Promise.allSettled(stores.map((s) => s.tb.server.stop()))
  await database?.drop().catch(() => undefined)
  await server?.stop()
  try {
    for (const step of steps) if (step.status === 'rejected') throw step.reason
  } finally {
    await scratch.disposeExpectingNoneLeft('left behind by the servers of this file')
  }
}, 60_000)

/** `type` undefined: any problem type (the CONTRACT.md test below checks it is documented). */
type Case = {
  what: string
  path?: string | ((w: Store) => string)
  method?: string
  /** The body text. */
  raw?: string | ((w: Store) => string)
  /** Raw bytes on the socket, for what no HTTP client sends (a NUL in a header or in the request line). */
  bytes?: (w: Store) => Buffer
  auth?: string | null
  headers?: Record<string, string>
  status: number
  type?: string | string[]
}

const t = (w: Store, extra: Record<string, unknown>) => JSON.stringify({ from: w.A, to: w.B, amount: 5_000, ...extra })
/** Metadata that makes a transfer body `depth` levels deep (the body object, metadata, then arrays). */
const metadataOfDepth = (depth: number) => ({ a: JSON.parse(`${'['.repeat(depth - 2)}${']'.repeat(depth - 2)}`) })
/** A transfer body of exactly `bytes` bytes (the memo fills it up). */
const sized = (bytes: number) => (w: Store) => t(w, { memo: 'x'.repeat(bytes - t(w, { memo: '' }).length) })
const NUL = '\u0000'
const LONE = '\ud800'
/** A transfer over raw HTTP, with these header lines besides Host, auth and the media type. */
const rawTransfer = (w: Store, lines: string[], target = '/transfers') =>
  rawRequest('POST', target, ['Host: bank', `Authorization: Bearer ${w.alice.customer.apiKey}`, 'Content-Type: application/json', ...lines], t(w, {}))

// Bodies are thunks: the accounts exist only once beforeAll has run, and differ per store.
const cases: Case[] = [
  { what: 'malformed JSON (cut short)', raw: (w) => t(w, {}).slice(0, -1), status: 400, type: '/problems/malformed-json' },
  { what: 'not JSON at all', raw: 'from=a&to=b&amount=5', status: 400, type: '/problems/malformed-json' },
  { what: 'JSON with trailing garbage', raw: (w) => `${t(w, {})}}`, status: 400, type: '/problems/malformed-json' },
  { what: 'single-quoted JSON', raw: (w) => t(w, {}).replaceAll('"', "'"), status: 400, type: '/problems/malformed-json' },
  { what: 'NaN as the amount', raw: (w) => t(w, {}).replace('5000', 'NaN'), status: 400, type: '/problems/malformed-json' },
  { what: 'JSON null as the body', raw: 'null', status: 400, type: ['/problems/malformed-json', '/problems/invalid-body'] },
  { what: 'a JSON string as the body', raw: '"transfer"', status: 400, type: ['/problems/malformed-json', '/problems/invalid-body'] },
  { what: 'an empty body', raw: '', status: 400, type: '/problems/invalid-body' },
  { what: 'an array body', raw: (w) => JSON.stringify([w.A, w.B, 5_000]), status: 400, type: '/problems/invalid-body' },
  { what: 'an empty object', raw: '{}', status: 400, type: '/problems/invalid-body' },
  { what: 'amount as a string', raw: (w) => t(w, { amount: '5000' }), status: 400, type: '/problems/invalid-body' },
  { what: 'amount null', raw: (w) => t(w, { amount: null }), status: 400, type: '/problems/invalid-body' },
  { what: 'amount true', raw: (w) => t(w, { amount: true }), status: 400, type: '/problems/invalid-body' },
  { what: 'amount as an array', raw: (w) => t(w, { amount: [5_000] }), status: 400, type: '/problems/invalid-body' },
  { what: 'amount as an object', raw: (w) => t(w, { amount: { won: 5_000 } }), status: 400, type: '/problems/invalid-body' },
  { what: 'from as a number', raw: (w) => t(w, { from: 1 }), status: 400, type: '/problems/invalid-body' },
  { what: 'to null', raw: (w) => t(w, { to: null }), status: 400, type: '/problems/invalid-body' },
  { what: 'from empty', raw: (w) => t(w, { from: '' }), status: 400, type: '/problems/invalid-body' },
  { what: 'from 65 characters long', raw: (w) => t(w, { from: 'a'.repeat(65) }), status: 400, type: '/problems/invalid-body' },
  { what: 'negative amount', raw: (w) => t(w, { amount: -5_000 }), status: 400, type: '/problems/invalid-body' },
  { what: 'zero amount', raw: (w) => t(w, { amount: 0 }), status: 400, type: '/problems/invalid-body' },
  { what: 'negative zero amount', raw: (w) => t(w, {}).replace('5000', '-0'), status: 400, type: '/problems/invalid-body' },
  { what: 'fractional amount', raw: (w) => t(w, { amount: 5_000.5 }), status: 400, type: '/problems/invalid-body' },
  { what: 'tiny fractional amount', raw: (w) => t(w, { amount: 0.0001 }), status: 400, type: '/problems/invalid-body' },
  { what: 'amount 1e300', raw: (w) => t(w, {}).replace('5000', '1e300'), status: 400, type: '/problems/invalid-body' },
  { what: 'amount 1e400 (beyond a double)', raw: (w) => t(w, {}).replace('5000', '1e400'), status: 400, type: '/problems/invalid-body' },
  { what: 'amount one over the maximum', raw: (w) => t(w, { amount: MAX_AMOUNT + 1 }), status: 400, type: '/problems/invalid-body' },
  { what: 'amount 2^53 + 1', raw: (w) => t(w, {}).replace('5000', '9007199254740993'), status: 400, type: '/problems/invalid-body' },
  { what: 'missing amount', raw: (w) => JSON.stringify({ from: w.A, to: w.B }), status: 400, type: '/problems/invalid-body' },
  { what: 'missing from', raw: (w) => JSON.stringify({ to: w.B, amount: 5 }), status: 400, type: '/problems/invalid-body' },
  { what: 'an unknown field', raw: (w) => t(w, { currency: 'USD' }), status: 400, type: '/problems/invalid-body' },
  { what: 'a __proto__ field', raw: (w) => t(w, {}).replace('{', '{"__proto__":{"amount":1},'), status: 400, type: '/problems/invalid-body' },
  { what: 'the same account twice', raw: (w) => t(w, { to: w.A }), status: 400, type: '/problems/invalid-body' },
  { what: 'a memo of 141 characters', raw: (w) => t(w, { memo: 'm'.repeat(141) }), status: 400, type: '/problems/invalid-body' },
  { what: 'a memo that is a number', raw: (w) => t(w, { memo: 42 }), status: 400, type: '/problems/invalid-body' },
  { what: 'metadata that is an array', raw: (w) => t(w, { metadata: [1, 2] }), status: 400, type: '/problems/invalid-body' },
  { what: 'metadata that is a string', raw: (w) => t(w, { metadata: 'x' }), status: 400, type: '/problems/invalid-body' },
  // Anything but UTF-8 JSON is 415, whatever the bytes would parse to.
  {
    what: 'a form-encoded body',
    raw: (w) => `from=${w.A}&to=${w.B}&amount=5000`,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    status: 415,
    type: '/problems/unsupported-media-type',
  },
  { what: 'JSON sent as text/plain', raw: (w) => t(w, {}), headers: { 'Content-Type': 'text/plain' }, status: 415, type: '/problems/unsupported-media-type' },
  {
    what: 'a charset the bank cannot read',
    raw: (w) => t(w, {}),
    headers: { 'Content-Type': 'application/json; charset=latin1' },
    status: 415,
    type: '/problems/unsupported-media-type',
  },
  {
    what: 'charset=utf-16 over UTF-8 bytes',
    raw: (w) => t(w, {}),
    headers: { 'Content-Type': 'application/json; charset=utf-16' },
    status: 415,
    type: '/problems/unsupported-media-type',
  },
  {
    what: 'charset=utf8 (not the registered name)',
    raw: (w) => t(w, {}),
    headers: { 'Content-Type': 'application/json; charset=utf8' },
    status: 415,
    type: '/problems/unsupported-media-type',
  },
  {
    what: 'a parameter other than charset',
    raw: (w) => t(w, {}),
    headers: { 'Content-Type': 'application/json; version=2' },
    status: 415,
    type: '/problems/unsupported-media-type',
  },
  {
    what: 'a charset parameter without a value',
    raw: (w) => t(w, {}),
    headers: { 'Content-Type': 'application/json; charset' },
    status: 415,
    type: '/problems/unsupported-media-type',
  },
  { what: 'an empty Content-Type', raw: (w) => t(w, {}), headers: { 'Content-Type': '' }, status: 415, type: '/problems/unsupported-media-type' },
  {
    what: 'application/problem+json',
    raw: (w) => t(w, {}),
    headers: { 'Content-Type': 'application/problem+json' },
    status: 415,
    type: '/problems/unsupported-media-type',
  },
  // Depth: checked on the text, before any schema (z.json() recurses).
  {
    what: 'metadata nested 33 levels deep (one over the limit)',
    raw: (w) => t(w, { metadata: metadataOfDepth(33) }),
    status: 400,
    type: '/problems/json-too-deep',
  },
  {
    what: 'metadata nested 1,500 arrays deep (3 KB)',
    raw: (w) => t(w, {}).replace('}', `,"metadata":{"a":${'['.repeat(1_500)}${']'.repeat(1_500)}}}`),
    status: 400,
    type: '/problems/json-too-deep',
  },
  { what: 'a body that is 2,500 nested objects', raw: () => `${'{"a":'.repeat(2_500)}1${'}'.repeat(2_500)}`, status: 400, type: '/problems/json-too-deep' },
  // I-JSON (RFC 7493): no duplicate member names, no lone surrogates, at any depth.
  {
    what: 'amount twice (JSON.parse keeps the last)',
    raw: (w) => t(w, {}).replace('"amount":5000', '"amount":1,"amount":5000'),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'amount twice, once spelled \\u0061mount',
    raw: (w) => t(w, {}).replace('"amount":5000', '"amount":1,"\\u0061mount":5000'),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'a duplicate member deep in metadata',
    raw: (w) => t(w, { metadata: { a: [{ b: 1 }] } }).replace('{"b":1}', '{"b":1,"b":2}'),
    status: 400,
    type: '/problems/invalid-body',
  },
  { what: 'a lone surrogate in the memo', raw: (w) => t(w, {}).replace('}', ',"memo":"abc\\ud800"}'), status: 400, type: '/problems/invalid-body' },
  { what: 'a lone surrogate in a metadata key', raw: (w) => t(w, {}).replace('}', ',"metadata":{"k\\udc00":1}}'), status: 400, type: '/problems/invalid-body' },
  {
    what: 'a reversed surrogate pair deep in metadata',
    raw: (w) => t(w, {}).replace('}', ',"metadata":{"a":["ok",{"b":"\\ude00\\ud83d"}]}}'),
    status: 400,
    type: '/problems/invalid-body',
  },
  // Money as written: a literal that is not exactly a whole number, whatever double it parses to.
  {
    what: 'amount 0.99999999999999999999 (parses to 1)',
    raw: (w) => t(w, {}).replace('5000', '0.99999999999999999999'),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'amount 5000.00000000000000001 (parses to 5000)',
    raw: (w) => t(w, {}).replace('5000', '5000.00000000000000001'),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'amount 50000e-1 written with a fraction in the exponent',
    raw: (w) => t(w, {}).replace('5000', '50001e-1'),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'account: balance 0.99999999999999999999',
    path: '/accounts',
    raw: '{"balance":0.99999999999999999999}',
    status: 400,
    type: '/problems/invalid-body',
  },
  // One key, not a list (the header is the bank's business before any layer's, from stage 0 on).
  {
    what: 'a bare Idempotency-Key holding a list (a, b)',
    raw: (w) => t(w, {}),
    headers: { 'Idempotency-Key': 'k-1, k-1' },
    status: 400,
    type: '/problems/idempotency-key-malformed',
  },
  {
    what: 'a quoted Idempotency-Key list ("a", "b")',
    raw: (w) => t(w, {}),
    headers: { 'Idempotency-Key': '"k-1", "k-2"' },
    status: 400,
    type: '/problems/idempotency-key-malformed',
  },
  { what: 'a gzip Content-Encoding over a body that is not gzip', raw: (w) => t(w, {}), headers: { 'Content-Encoding': 'gzip' }, status: 400 },
  { what: 'a body of exactly the limit (read, then refused for its memo)', raw: sized(16_384), status: 400, type: '/problems/invalid-body' },
  { what: 'a body one byte over the limit', raw: sized(16_385), status: 413, type: '/problems/body-too-large' },
  { what: 'a 10 MB body', raw: sized(10 * 1024 * 1024), status: 413, type: '/problems/body-too-large' },
  { what: 'no Authorization header', raw: (w) => t(w, {}), auth: null, status: 401, type: '/problems/unauthorized' },
  { what: 'an unknown API key', raw: (w) => t(w, {}), auth: 'Bearer sk_0000', status: 401, type: '/problems/unauthorized' },
  {
    what: 'a Basic Authorization header',
    raw: (w) => t(w, {}),
    auth: `Basic ${Buffer.from('alice:pw').toString('base64')}`,
    status: 401,
    type: '/problems/unauthorized',
  },
  { what: 'Bearer without a token', raw: (w) => t(w, {}), auth: 'Bearer ', status: 401, type: '/problems/unauthorized' },
  { what: 'the admin token as a client key', raw: (w) => t(w, {}), auth: 'admin', status: 401, type: '/problems/unauthorized' },
  { what: 'no auth and malformed JSON', raw: '{"amount":', auth: null, status: 400, type: '/problems/malformed-json' },
  // The other routes that write.
  { what: 'deposit: negative amount', path: '/deposits', raw: (w) => JSON.stringify({ to: w.A, amount: -1 }), status: 400, type: '/problems/invalid-body' },
  { what: 'deposit: fractional amount', path: '/deposits', raw: (w) => JSON.stringify({ to: w.A, amount: 0.5 }), status: 400, type: '/problems/invalid-body' },
  { what: 'deposit: huge amount', path: '/deposits', raw: (w) => JSON.stringify({ to: w.A, amount: 1e300 }), status: 400, type: '/problems/invalid-body' },
  {
    what: 'deposit: a from field',
    path: '/deposits',
    raw: (w) => JSON.stringify({ from: w.B, to: w.A, amount: 1 }),
    status: 400,
    type: '/problems/invalid-body',
  },
  { what: 'deposit: malformed JSON', path: '/deposits', raw: '{"to":', status: 400, type: '/problems/malformed-json' },
  {
    what: 'deposit: a 10 MB body',
    path: '/deposits',
    raw: (w) => JSON.stringify({ to: w.A, amount: 1, memo: 'x'.repeat(10 * 1024 * 1024) }),
    status: 413,
    type: '/problems/body-too-large',
  },
  {
    what: 'deposit: no Authorization header',
    path: '/deposits',
    raw: (w) => JSON.stringify({ to: w.A, amount: 1 }),
    auth: null,
    status: 401,
    type: '/problems/unauthorized',
  },
  { what: 'account: negative balance', path: '/accounts', raw: '{"balance":-1}', status: 400, type: '/problems/invalid-body' },
  { what: 'account: fractional balance', path: '/accounts', raw: '{"balance":1.5}', status: 400, type: '/problems/invalid-body' },
  { what: 'account: balance over the maximum', path: '/accounts', raw: `{"balance":${MAX_AMOUNT + 1}}`, status: 400, type: '/problems/invalid-body' },
  { what: 'account: balance as a string', path: '/accounts', raw: '{"balance":"100"}', status: 400, type: '/problems/invalid-body' },
  { what: 'account: no Authorization header', path: '/accounts', raw: '{"balance":100}', auth: null, status: 401, type: '/problems/unauthorized' },
  { what: 'admin client: empty name', path: '/admin/clients', raw: '{"name":""}', auth: 'admin', status: 400, type: '/problems/invalid-body' },
  { what: 'admin client: malformed JSON', path: '/admin/clients', raw: '{"name"', auth: 'admin', status: 400, type: '/problems/malformed-json' },
  {
    what: 'admin core: hold as a string',
    path: '/admin/core',
    method: 'PUT',
    raw: '{"hold":"yes"}',
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin core: negative delay',
    path: '/admin/core',
    method: 'PUT',
    raw: '{"delayMs":-1}',
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin core: fractional failNext',
    path: '/admin/core',
    method: 'PUT',
    raw: '{"failNext":1.5}',
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin core: letGo without fails',
    path: '/admin/core',
    method: 'PUT',
    raw: '{"letGo":{"call":1}}',
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin core: holdNext negative',
    path: '/admin/core',
    method: 'PUT',
    raw: '{"holdNext":-1}',
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin core: crashAfterCommit not a boolean',
    path: '/admin/core',
    method: 'PUT',
    raw: '{"crashAfterCommit":1}',
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin core: unknown field',
    path: '/admin/core',
    method: 'PUT',
    raw: '{"explode":true}',
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  // What PostgreSQL cannot store (bank/storableText.ts): refused at the edge, the same on both stores.
  { what: 'NUL: from holding U+0000', raw: (w) => t(w, { from: `${w.A}${NUL}` }), status: 400, type: '/problems/invalid-body' },
  { what: 'NUL: from that is only U+0000', raw: (w) => t(w, { from: NUL }), status: 400, type: '/problems/invalid-body' },
  { what: 'NUL: to holding U+0000', raw: (w) => t(w, { to: `${w.B}${NUL}` }), status: 400, type: '/problems/invalid-body' },
  { what: 'NUL: memo holding U+0000', raw: (w) => t(w, { memo: `a${NUL}b` }), status: 400, type: '/problems/invalid-body' },
  { what: 'NUL: a metadata string', raw: (w) => t(w, { metadata: { note: NUL } }), status: 400, type: '/problems/invalid-body' },
  { what: 'NUL: a string deep in metadata', raw: (w) => t(w, { metadata: { a: [1, { b: ['ok', `x${NUL}`] }] } }), status: 400, type: '/problems/invalid-body' },
  { what: 'NUL: a metadata member name', raw: (w) => t(w, { metadata: { [`k${NUL}`]: 1 } }), status: 400, type: '/problems/invalid-body' },
  { what: 'NUL: a member name deep in metadata', raw: (w) => t(w, { metadata: { a: [{ [NUL]: true }] } }), status: 400, type: '/problems/invalid-body' },
  {
    what: 'NUL: a raw NUL byte inside a JSON string',
    raw: (w) => t(w, { memo: 'a_b' }).replace('a_b', `a${NUL}b`),
    status: 400,
    type: '/problems/malformed-json',
  },
  { what: 'lone surrogate: from', raw: (w) => t(w, { from: `${w.A}${LONE}` }), status: 400, type: '/problems/invalid-body' },
  { what: 'lone surrogate: to', raw: (w) => t(w, { to: LONE }), status: 400, type: '/problems/invalid-body' },
  {
    what: 'lone surrogate: a member name deep in metadata',
    raw: (w) => t(w, { metadata: { a: { '\udfff': 1 } } }),
    status: 400,
    type: '/problems/invalid-body',
  },
  { what: 'deposit: NUL in to', path: '/deposits', raw: (w) => JSON.stringify({ to: `${w.A}${NUL}`, amount: 1 }), status: 400, type: '/problems/invalid-body' },
  {
    what: 'deposit: lone surrogate in to',
    path: '/deposits',
    raw: (w) => JSON.stringify({ to: `${LONE}${w.A}`, amount: 1 }),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'deposit: NUL in the memo',
    path: '/deposits',
    raw: (w) => JSON.stringify({ to: w.A, amount: 1, memo: NUL }),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'deposit: NUL in a metadata name and value',
    path: '/deposits',
    raw: (w) => JSON.stringify({ to: w.A, amount: 1, metadata: { [`k${NUL}`]: [`v${NUL}`] } }),
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin client: NUL in the name',
    path: '/admin/clients',
    raw: JSON.stringify({ name: `eve${NUL}` }),
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  {
    what: 'admin client: a lone surrogate in the name',
    path: '/admin/clients',
    raw: JSON.stringify({ name: `eve${LONE}` }),
    auth: 'admin',
    status: 400,
    type: '/problems/invalid-body',
  },
  // In the path: a segment that cannot be stored names nothing; answered as one Express cannot decode.
  { what: 'path: GET /accounts/{id}%00', method: 'GET', path: (w) => `/accounts/${w.A}%00`, status: 400, type: '/problems/bad-request' },
  { what: 'path: GET /accounts/%00', method: 'GET', path: '/accounts/%00', status: 400, type: '/problems/bad-request' },
  { what: 'path: GET /transfers/%00tr', method: 'GET', path: '/transfers/%00tr', status: 400, type: '/problems/bad-request' },
  { what: 'path: GET /deposits/dp%00', method: 'GET', path: '/deposits/dp%00', status: 400, type: '/problems/bad-request' },
  { what: 'path: a lone surrogate in WTF-8 (%ED%A0%80)', method: 'GET', path: '/accounts/acc_%ED%A0%80', status: 400, type: '/problems/bad-request' },
  { what: 'path: an overlong NUL (%C0%80)', method: 'GET', path: '/accounts/%C0%80', status: 400, type: '/problems/bad-request' },
  {
    what: 'path: a raw NUL byte in the request line',
    bytes: (w) => rawRequest('GET', `/accounts/${w.A}\x00`, ['Host: bank', `Authorization: Bearer ${w.alice.customer.apiKey}`]),
    status: 400,
    type: '/problems/bad-request',
  },
  // In the key header: Node's parser refuses the NUL byte before the bank (keyLines.ts checks again).
  { what: 'key header: a NUL byte in Idempotency-Key', bytes: (w) => rawTransfer(w, ['Idempotency-Key: k\x00-1']), status: 400, type: '/problems/bad-request' },
  {
    what: 'key header: a NUL byte in a quoted Idempotency-Key',
    bytes: (w) => rawTransfer(w, ['Idempotency-Key: "k\x00-1"']),
    status: 400,
    type: '/problems/bad-request',
  },
]

type Answer = { status: number; type: string | undefined; contentType: string | undefined; json: Record<string, unknown> | undefined; shown: string }

async function send(w: Store, c: Case): Promise<Answer> {
  if (c.bytes) {
    const bytes = c.bytes(w)
    const reply = await sendRaw(w.port, bytes)
    expect(reply, `${w.name}: an answer, not a closed connection`).toBeDefined()
    seen.push(asExchange(bytes, reply!))
    return {
      status: reply!.status,
      type: reply!.json?.type,
      contentType: reply!.headers['content-type'],
      json: reply!.json,
      shown: `${w.name}: HTTP ${reply!.status} ${reply!.body.slice(0, 300)}`,
    }
  }
  const body = typeof c.raw === 'function' ? c.raw(w) : c.raw
  const method = c.method ?? 'POST'
  const path = typeof c.path === 'function' ? c.path(w) : (c.path ?? '/transfers')
  const authorization = c.auth === null ? undefined : c.auth === 'admin' ? `Bearer ${w.tb.adminToken}` : (c.auth ?? `Bearer ${w.alice.customer.apiKey}`)
  // A key on every money-moving POST, so stage 0 (SQLite) and stage 6 (PostgreSQL) get the same request: stage 0 ignores it.
  const key: Record<string, string> = method === 'POST' && (path === '/transfers' || path === '/deposits') ? { 'Idempotency-Key': randomUUID() } : {}
  const reply = await w.bank.send({ method, path, body, headers: { ...key, ...(authorization ? { Authorization: authorization } : {}), ...c.headers } })
  return {
    status: reply.status,
    type: reply.json?.type,
    contentType: reply.headers['content-type'],
    json: reply.json,
    shown: `${w.name}: ${method} ${path} -> HTTP ${reply.status} ${reply.text.slice(0, 300)}`,
  }
}

/** Answers per store, for the count of cases and 5xx at the end; and the time each store's part of the cases took (reported, never asserted). */
const answered = { sqlite: [] as number[], postgres: [] as number[] }
const spentMs = { sqlite: 0, postgres: 0 }

describe('bad input: the same 4xx problem from the SQLite and the PostgreSQL bank, never a 5xx, nothing changed', () => {
  it.for(cases)('$what → $status', async (c) => {
    const answers: Answer[] = []
    for (const w of stores) {
      const started = performance.now()
      const a = await send(w, c)
      answers.push(a)
      answered[w.name].push(a.status)
      expect(a.status, a.shown).toBeLessThan(500)
      const types = c.type === undefined ? [] : Array.isArray(c.type) ? c.type : [c.type]
      expect(a.status, a.shown).toBe(c.status)
      expect(a.contentType, a.shown).toMatch(/^application\/problem\+json/)
      expect(a.json, a.shown).toMatchObject({ status: c.status, title: expect.any(String), detail: expect.any(String) })
      if (types.length > 0) expect(types, a.shown).toContain(a.type)
      else expect(a.type, a.shown).toMatch(/^\/problems\/[a-z-]+$/)
      if (c.status === 400 && a.type === '/problems/invalid-body')
        expect(a.json?.errors, `${a.shown}: invalid-body lists each issue`).toEqual(
          expect.arrayContaining([{ path: expect.any(String), message: expect.any(String) }]),
        )
      expect(await w.bank.ledger(), `${w.name}: no balance and no ledger row may change`).toEqual(w.before!.ledger)
      expect(await w.countClients(), `${w.name}: no client may be added`).toBe(w.before!.clients)
      expect(await w.bank.core({})).toEqual({ delayMs: 0, hold: false, holdNext: 0, failNext: 0, crashAfterCommit: false, inflight: 0, held: [] })
      spentMs[w.name] += performance.now() - started
    }
    const [onSqlite, onPg] = answers
    expect({ status: onPg!.status, type: onPg!.type }, `the same answer on both stores\n${onSqlite!.shown}\n${onPg!.shown}`).toEqual({
      status: onSqlite!.status,
      type: onSqlite!.type,
    })
  })

  it('every case ran on both stores, and none was a 5xx', () => {
    const fivexx = (statuses: number[]) => statuses.filter((s) => s >= 500).length
    expect(answered.sqlite).toHaveLength(cases.length)
    expect(answered.postgres).toHaveLength(cases.length)
    expect({ sqlite: fivexx(answered.sqlite), postgres: fivexx(answered.postgres) }).toEqual({ sqlite: 0, postgres: 0 })
    const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
    console.log(
      `${cases.length} cases per store; 5xx: sqlite ${fivexx(answered.sqlite)}, postgres ${fivexx(answered.postgres)}. ` +
        `Time: the cases ${s(spentMs.sqlite)} on SQLite, ${s(spentMs.postgres)} on PostgreSQL; starting PostgreSQL and its bank ${s(pgSetupMs)}.`,
    )
  })

  it("the key header's safety net: a key that cannot be stored is malformed (Node's parser never lets one through)", () => {
    for (const key of ['k\u0000', '"k\u0000"', 'k\ud800']) expect(repeatedKeyProblem({ 'idempotency-key': [key] })).toMatchObject({ status: 400 })
    expect(JSON.parse(repeatedKeyProblem({ 'idempotency-key': ['k\u0000'] })!.body)).toMatchObject({ type: '/problems/idempotency-key-malformed' })
    expect(repeatedKeyProblem({ 'idempotency-key': ['k-1'] })).toBeUndefined()
  })

  it('the servers logged no internal error during all that', () => {
    for (const w of stores) expect(w.tb.server.logTail(10_000), w.name).not.toMatch(/error|\n\s+at /i)
  })
})

// Over every response this file received: each problem type is one CONTRACT.md documents, with the documented status.
describe('CONTRACT.md', () => {
  it('documents every problem type the banks sent in these tests', () => {
    const contract = readFileSync(resolve(repoRoot, 'CONTRACT.md'), 'utf8')
    const documented = new Set([...contract.matchAll(/^\|\s*(\d{3})\s*\|\s*`(\/problems\/[a-z-]+)`/gm)].map((m) => `${m[1]} ${m[2]}`))
    const sent = new Set<string>()
    for (const e of seen) {
      if (!e.response?.headers['content-type']?.startsWith('application/problem+json')) continue
      sent.add(`${e.response.status} ${(JSON.parse(e.response.body) as { type: string }).type}`)
    }
    expect(sent.size).toBeGreaterThan(5)
    expect(
      [...sent].filter((s) => !documented.has(s)),
      'problem types sent but not in CONTRACT.md',
    ).toEqual([])
  })
})
