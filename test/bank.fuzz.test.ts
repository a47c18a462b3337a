// Property-based fuzzing of the bank over raw TCP: random methods, paths
// (route spellings included), headers (repeated, malformed, control bytes),
// media types, encodings, bodies (valid transfers bent out of shape, deep
// nesting, random JSON, random bytes), against each store from one table:
// the stage 0 and stage 5 reference solutions on SQLite, the stage 0 and
// stage 6 ones on PostgreSQL (one embedded server for this file, a database
// per bank). Whatever arrives:
// - the answer is never a 5xx (the core simulator is never told to fail);
// - every error is application/problem+json with a type, a title and its status;
// - a 4xx changes no balance and no ledger row, and money is always conserved;
// - the server answers every request, and still answers /health afterwards.
// Seeded: LAB_FUZZ_SEED=<n> replays a run, LAB_FUZZ_RUNS=<n> sets the cases per stage.
import { resolve } from 'node:path'
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Ledger } from '#harness/bankClient.ts'
import { TRANSFER_SPELLINGS } from '#grader/checks/routeSpelling.ts'
import { repoRoot } from '#harness/paths.ts'
import { balancesOf, customerWith, startBank, STAGE0_SOLUTION, type TestBank } from './helpers/bank.ts'
import { sharedPostgres } from './helpers/postgres.ts'
import { rawRequest, sendRaw, type RawReply } from './helpers/rawHttp.ts'
import { scratchDir } from './helpers/scratch.ts'

const SEED = Number(process.env.LAB_FUZZ_SEED ?? 20_261_201)
const RUNS = Number(process.env.LAB_FUZZ_RUNS ?? 200)
const rerun = `LAB_FUZZ_SEED=${SEED} LAB_FUZZ_RUNS=${RUNS} npx vitest run test/bank.fuzz.test.ts`
const scratch = scratchDir('fuzz')
/** One PostgreSQL server for the whole file: a database on it per bank that runs on PostgreSQL. */
const pg = sharedPostgres()

afterAll(() => scratch.dispose())

/** What the generator knows of the bank it attacks: real accounts and a real API key. */
type World = { apiKey: string; own: [string, string]; other: string }

type Body = { kind: 'text'; text: string; encoding: 'utf8' | 'utf16le' | 'latin1' | 'gzip' } | { kind: 'bytes'; bytes: number[] }

type Case = { method: string; target: string; headers: string[]; body: Body }

const oneOf = <T>(...values: T[]) => fc.constantFrom(...values)
/** Usually the well-formed choice, so that requests get deep enough to meet the layer; now and then one of the others. */
const mostly = <T>(usual: T, ...others: T[]) => fc.oneof({ weight: 12, arbitrary: fc.constant(usual) }, { weight: 1, arbitrary: oneOf(...others) })

/** A number literal for amount: whole, spelled otherwise, rounded by JSON.parse, out of range, not a number. */
const amountLiteral = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 200_000 }).map(String) },
  {
    weight: 1,
    arbitrary: oneOf(
      '5000.0',
      '5e3',
      '0.99999999999999999999',
      '1.5',
      '-1',
      '0',
      '-0',
      '1e400',
      '1e-400',
      '9007199254740993',
      '"5000"',
      'null',
      'true',
      '[1]',
      '{}',
    ),
  },
)

/** A memo as JSON text: well-formed, any code points (lone surrogates now and then), or escapes chosen to hurt. */
const memoText = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 30 }).map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 10, unit: 'binary' }).map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: oneOf('"\\ud800"', '"\\udfff\\ud83d"', '"\\u0000"', '"é"', '"🙂"', '"\\x"', '"unterminated') },
)

function transferText(w: World): fc.Arbitrary<string> {
  return fc
    .record({
      // An id with U+0000 or a lone surrogate: no store can hold it (bank/storableText.ts).
      from: mostly(w.own[0], w.own[1], w.other, 'acc_nope', '', 'x'.repeat(70), `${w.own[0]}\u0000`, `${w.own[0]}\ud800`),
      to: fc.oneof({ weight: 12, arbitrary: oneOf(w.own[1], w.other) }, { weight: 1, arbitrary: oneOf(w.own[0], 'acc_nope', '', '\u0000') }),
      amount: amountLiteral,
      memo: fc.option(memoText, { nil: undefined }),
      metadata: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 4 }), { nil: undefined }),
      extra: mostly<string | undefined>(undefined, '"currency":"USD"', '"amount":1', '"from":"acc_nope"', '"__proto__":{"amount":1}', '"\\u0061mount":2'),
    })
    .map(({ from, to, amount, memo, metadata, extra }) => {
      const members = [`"from":${JSON.stringify(from)}`, `"to":${JSON.stringify(to)}`, `"amount":${amount}`]
      if (memo !== undefined) members.push(`"memo":${memo}`)
      if (metadata !== undefined) members.push(`"metadata":${JSON.stringify(metadata)}`)
      if (extra !== undefined) members.push(extra)
      return `{${members.join(',')}}`
    })
}

function bodies(w: World): fc.Arbitrary<Body> {
  const text = fc.oneof(
    { weight: 10, arbitrary: transferText(w) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 1, max: 3_000 }).map((n) => `{"to":"${w.own[0]}","amount":1,"metadata":{"a":${'['.repeat(n)}${']'.repeat(n)}}}`),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v) ?? 'null') },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: oneOf('', '{}', '{"balance":100}', '{"balance":0.99999999999999999999}', '{"name":"x"}', '{"hold":true}') },
  )
  return fc.oneof(
    {
      weight: 12,
      arbitrary: fc.record({
        kind: fc.constant('text' as const),
        text,
        encoding: mostly<'utf8' | 'utf16le' | 'latin1' | 'gzip'>('utf8', 'utf16le', 'latin1', 'gzip'),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 80 }) }) },
  )
}

function headers(w: World): fc.Arbitrary<string[]> {
  const key = oneOf('k-1', '"k-1"', 'k-1, k-1', '"a", "b"', '', '"unterminated', 'x'.repeat(300), 'ключ', '0b6b1c1e-5f0e-4d4e-9b33-5c7e1c2a9f10')
  return fc
    .record({
      host: mostly(['Host: bank'], []),
      auth: mostly(
        [`Authorization: Bearer ${w.apiKey}`],
        [],
        ['Authorization: Bearer sk_nope'],
        ['Authorization: Basic Zm9vOmJhcg=='],
        ['Authorization: Bearer'],
      ),
      type: mostly(
        ['Content-Type: application/json'],
        ['Content-Type: application/json; charset=UTF-8'],
        [],
        ['Content-Type: text/plain'],
        ['Content-Type: application/json; charset=utf-16'],
        ['Content-Type: application/json; charset'],
        ['Content-Type: application/x-www-form-urlencoded'],
        ['Content-Type: ;;;'],
      ),
      keys: fc
        .oneof({ weight: 3, arbitrary: fc.uuid().map((k) => [k]) }, { weight: 2, arbitrary: fc.array(key, { maxLength: 3 }) })
        .map((ks) => ks.map((k) => `Idempotency-Key: ${k}`)),
      encoding: mostly<string[]>([], ['Content-Encoding: gzip'], ['Content-Encoding: br'], ['Content-Encoding: x-unknown'], ['Content-Encoding: identity']),
      // Bytes Node's parser refuses, lines it rejects, expectations it does not meet.
      hostile: mostly<string[]>(
        [],
        ['X-Note: a\x01b'],
        ['X-Note: a\x7fb'],
        ['X-Note: a\x00b'],
        ['X-Note: a\rb'],
        ['X-Note: a', ' folded'],
        ['Transfer-Encoding: chunked', 'Content-Length: 1'],
        ['Expect: 200-ok'],
        ['Expect: 100-continue'],
        [`X-Big: ${'x'.repeat(20_000)}`],
        ['Bad Header: x'],
        [': empty-name'],
      ),
    })
    .map((h) => [...h.host, ...h.auth, ...h.type, ...h.keys, ...h.encoding, ...h.hostile])
}

function cases(w: World): fc.Arbitrary<Case> {
  const moneyRoute = oneOf(...TRANSFER_SPELLINGS, '/deposits', '/DEPOSITS/')
  const route = oneOf(
    ...TRANSFER_SPELLINGS,
    '/deposits',
    '/DEPOSITS/',
    '/accounts',
    `/accounts/${w.own[0]}`,
    '/transfers/tr_nope',
    '/admin/ledger',
    '/admin/core',
    '/admin/clients',
    '/health',
    '/',
    '*',
  )
  const target = fc.oneof(
    { weight: 24, arbitrary: moneyRoute },
    { weight: 8, arbitrary: route },
    { weight: 2, arbitrary: fc.tuple(route, oneOf('?a=1', '?', '#x', '/', '//', '/..', '%00', '%2F', ';x', '%ED%A0%80')).map(([r, tail]) => r + tail) },
    { weight: 1, arbitrary: oneOf('/%74ransfers', '//transfers', '/trånsfers', '/transfers /x', 'http://bank/transfers', '/transfers\x00') },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map((s) => `/${s}`) },
  )
  const method = mostly('POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'post', 'BREW')
  return fc.record({ method, target, headers: headers(w), body: bodies(w) })
}

function encode(body: Body): Buffer {
  if (body.kind === 'bytes') return Buffer.from(body.bytes)
  return body.encoding === 'gzip' ? gzipSync(body.text) : Buffer.from(body.text, body.encoding)
}

/** Everything the invariants compare: balances and ledger rows. */
const state = (l: Ledger) => ({ balances: balancesOf(l), entries: l.entries.length })

function expectConserved(l: Ledger) {
  const opened = l.accounts.reduce((s, a) => s + a.openedWith, 0)
  const deposited = l.entries.filter((e) => e.kind === 'deposit').reduce((s, e) => s + e.amount, 0)
  expect(
    l.accounts.reduce((s, a) => s + a.balance, 0),
    'money is conserved',
  ).toBe(opened + deposited)
}

describe.for([
  ['stage 0', 'sqlite', STAGE0_SOLUTION],
  ['stage 5', 'sqlite', resolve(repoRoot, 'solutions', '05-scope-ttl')],
  ['stage 0', 'postgres', STAGE0_SOLUTION],
  ['stage 6', 'postgres', resolve(repoRoot, 'solutions', '06-production')],
] as const)('fuzzing the bank with the %s solution on %s', ([, store, stageDir]) => {
  let tb: TestBank
  let world: World
  beforeAll(async () => {
    tb = await startBank(scratch.path, { stageDir, env: store === 'postgres' ? { LAB_DATABASE_URL: await pg.newDatabase() } : {} })
    const payer = await customerWith(tb.bank, 1_000_000_000, 1_000_000_000)
    const other = await customerWith(tb.bank, 1_000)
    world = { apiKey: payer.customer.apiKey, own: [payer.accounts[0]!, payer.accounts[1]!], other: other.accounts[0]! }
  })
  afterAll(async () => {
    await tb?.server.stop()
  })

  it(`${RUNS} random requests: no 5xx, problems for every error, nothing moved on a 4xx, the server up (seed ${SEED})`, {
    timeout: 60_000 + RUNS * 300,
  }, async () => {
    const port = Number(new URL(tb.bank.url).port)
    const statuses = new Map<number, number>()
    const property = fc.asyncProperty(cases(world), async (c) => {
      const bytes = rawRequest(c.method, c.target, c.headers, encode(c.body))
      const before = await tb.bank.ledger()
      const reply = await sendRaw(port, bytes)
      const shown = `${JSON.stringify(bytes.toString('latin1').slice(0, 1_500))}\n→ ${reply ? `${reply.status} ${JSON.stringify(reply.headers)} ${reply.body.slice(0, 500)}` : 'no answer'}`
      expect(reply, `the server answers\n${shown}`).toBeDefined()
      const r = reply as RawReply
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
      expect(r.status, `no 5xx\n${shown}`).toBeLessThan(500)
      if (r.status >= 400) {
        expect(r.headers['content-type'], `errors are problem+json\n${shown}`).toMatch(/^application\/problem\+json/)
        if (c.method !== 'HEAD')
          expect(r.json, `a problem body\n${shown}`).toMatchObject({
            type: expect.stringMatching(/^\/problems\/[a-z-]+$/),
            title: expect.any(String),
            status: r.status,
          })
      }
      const after = await tb.bank.ledger()
      if (r.status >= 400) expect(state(after), `a ${r.status} moved nothing\n${shown}`).toEqual(state(before))
      expectConserved(after)
      expect((await tb.bank.send({ path: '/health' })).status, `the server still answers\n${shown}`).toBe(200)
    })
    try {
      await fc.assert(property, { seed: SEED, numRuns: RUNS, endOnFailure: true })
    } catch (error) {
      // fast-check keeps the failed assertion as the cause: show both.
      const cause = (error as Error).cause
      throw new Error(`fuzz failed (seed ${SEED}). Rerun: ${rerun}\n${(error as Error).message}${cause instanceof Error ? `\n${cause.message}` : ''}`)
    }
    expect(tb.server.alive).toBe(true)
    expect(tb.server.logTail(10_000), 'no internal error logged').not.toMatch(/internal|\n\s+at /i)
    // The spread of answers, so a generator that only ever hits one path shows.
    console.log(
      `fuzz ${stageDir.split('/').at(-1)} on ${store}: ${RUNS} cases, seed ${SEED}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`,
    )
    expect(statuses.size, 'the cases reach many different answers').toBeGreaterThan(6)
  })
})
