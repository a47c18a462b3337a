// The bank's HTTP contract (CONTRACT.md), tested against real bank processes
// (bank/main.ts with the stage 0 layer) on a real port, on each store: one
// table of cases run on a SQLite file and on PostgreSQL (an embedded server
// started once for this file, a database per bank). What only one store has
// (several processes on one SQLite file, its WAL) is tested on that one.
import { once } from 'node:events'
import { existsSync, readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import Database from 'better-sqlite3'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '#bank/app.ts'
import { loadConfig } from '#bank/config.ts'
import { openDatabase } from '#bank/db.ts'
import { createHttpServer } from '#bank/httpServer.ts'
import type { Layer, StoreKind } from '#bank/layer.ts'
import { openPgStore } from '#bank/pg/store.ts'
import { jsonOutcome } from '#bank/problem.ts'
import { MAX_JSON_DEPTH } from '#bank/schemas.ts'
import { sqliteStore } from '#bank/sqliteStore.ts'
import type { Store } from '#bank/store.ts'
import type { BankClient, Customer, Ledger } from '#harness/bankClient.ts'
import { TRANSFER_SPELLINGS } from '#grader/checks/routeSpelling.ts'
import { course } from '#harness/course.ts'
import type { Exchange, RequestSpec } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import { balancesOf, customerWith, expectProblemReply, startBank, type TestBank } from './helpers/bank.ts'
import { sharedPostgres } from './helpers/postgres.ts'
import { asExchange, rawRequest, sendRaw } from './helpers/rawHttp.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('contract')
const seen: Exchange[] = []

afterAll(() => scratch.disposeExpectingNoneLeft('server processes left running by this file'))
/** One PostgreSQL server for the whole file: a database on it per bank that runs on PostgreSQL. */
const pg = sharedPostgres()

type StoreName = 'sqlite' | 'postgres'

/** The environment that puts a bank on `store`: its own SQLite file (startBank's default), or a fresh database on the file's PostgreSQL. */
async function storeEnv(store: StoreName): Promise<Record<string, string>> {
  return store === 'postgres' ? { LAB_DATABASE_URL: await pg.newDatabase() } : {}
}

/** The same store, opened in this process, for an app built here around a layer of the test's own. */
async function inProcessStore(store: StoreName): Promise<Store<StoreKind>> {
  return store === 'postgres' ? openPgStore(await pg.newDatabase(), 2) : sqliteStore(openDatabase(':memory:'))
}

// Every case here applies to both stores: one table, run on each, by the stage 0 solution.
describe.for(['sqlite', 'postgres'] as const)('the bank on %s', (store) => {
  let tb: TestBank
  let bank: BankClient
  let alice: { customer: Customer; accounts: string[] }
  let bob: { customer: Customer; accounts: string[] }

  beforeAll(async () => {
    tb = await startBank(scratch.path, { env: await storeEnv(store), record: (e) => seen.push(e) })
    bank = tb.bank
    alice = await customerWith(bank, 1_000_000, 50_000)
    bob = await customerWith(bank, 300_000)
  }, 60_000)

  afterAll(async () => {
    await tb?.server.stop()
  })

  const admin = (spec: RequestSpec) => bank.send({ ...spec, headers: { Authorization: `Bearer ${tb.adminToken}`, ...spec.headers } })

  describe('routes', () => {
    it('GET /health answers 200 with the server pid, without authentication', async () => {
      const r = await bank.send({ path: '/health' })
      expect(r.status).toBe(200)
      expect(r.headers['content-type']).toBe('application/json')
      expect(r.json).toEqual({ status: 'ok', pid: tb.server.pid })
    })

    it('admin routes need the admin token: none, a wrong one or a client key get 401 with WWW-Authenticate', async () => {
      const attempts: RequestSpec[] = [
        { path: '/admin/ledger' },
        { path: '/admin/core' },
        { method: 'PUT', path: '/admin/core', body: { hold: true } },
        { path: '/admin/clients', body: { name: 'mallory' } },
      ]
      for (const spec of attempts)
        for (const auth of [undefined, 'Bearer wrong-token-123', `Bearer ${alice.customer.apiKey}`, `Basic ${tb.adminToken}`]) {
          const r = await bank.send({ ...spec, headers: auth ? { Authorization: auth } : {} })
          expectProblemReply(r, 401, '/problems/unauthorized')
          expect(r.headers['www-authenticate']).toBe('Bearer')
        }
      expect((await bank.core({})).hold).toBe(false)
    })

    it('POST /admin/clients answers 201 with an id, the name and an API key that works', async () => {
      const r = await admin({ path: '/admin/clients', body: { name: 'teller desk' } })
      expect(r.status).toBe(201)
      expect(r.json).toEqual({ id: expect.stringMatching(/^cl_/), name: 'teller desk', apiKey: expect.stringMatching(/^sk_/) })
      const opened = await bank.as({ ...r.json }, { path: '/accounts', body: { balance: 0 } })
      expect(opened.status).toBe(201)
    })

    it('POST /accounts answers 201 with Location; GET /accounts/{id} reads it; 403 for another client, 404 unknown', async () => {
      const r = await bank.as(bob.customer, { path: '/accounts', body: { balance: 123_456 } })
      expect(r.status).toBe(201)
      expect(r.json).toEqual({ id: expect.stringMatching(/^acc_/), balance: 123_456 })
      expect(r.headers.location).toBe(`/accounts/${r.json.id}`)
      const read = await bank.as(bob.customer, { path: r.headers.location! })
      expect(read.status).toBe(200)
      expect(read.json).toEqual({ id: r.json.id, balance: 123_456 })
      expectProblemReply(await bank.as(alice.customer, { path: r.headers.location! }), 403, '/problems/not-account-owner')
      expectProblemReply(await bank.as(bob.customer, { path: '/accounts/acc_nope' }), 404, '/problems/account-not-found')
      expectProblemReply(await bank.send({ path: r.headers.location! }), 401, '/problems/unauthorized')
    })

    it('POST /transfers answers 201 with the documented body and Location, and moves exactly the amount', async () => {
      const before = await bank.ledger()
      const [from, to] = [alice.accounts[0]!, bob.accounts[0]!]
      const r = await bank.transfer(alice.customer, { from, to, amount: 200_000 })
      expect(r.status).toBe(201)
      expect(r.headers['content-type']).toBe('application/json')
      expect(Object.keys(r.json)).toEqual(['id', 'from', 'to', 'amount', 'createdAt', 'balanceAfter'])
      expect(r.json).toMatchObject({ id: expect.stringMatching(/^tr_/), from, to, amount: 200_000 })
      expect(r.json.balanceAfter).toBe(balancesOf(before)[from]! - 200_000)
      expect(new Date(r.json.createdAt).toISOString()).toBe(r.json.createdAt)
      expect(r.headers.location).toBe(`/transfers/${r.json.id}`)
      expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text))

      const after = await bank.ledger()
      expect(after.entries.slice(before.entries.length)).toEqual([
        { id: r.json.id, kind: 'transfer', clientId: alice.customer.id, from, to, amount: 200_000, createdAt: r.json.createdAt },
      ])
      expect(balancesOf(after)).toEqual({ ...balancesOf(before), [from]: balancesOf(before)[from]! - 200_000, [to]: balancesOf(before)[to]! + 200_000 })
    })

    it('a body computed again would differ: two equal transfers get different ids and balanceAfter', async () => {
      const body = { from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 1_000 }
      const [one, two] = [await bank.transfer(alice.customer, body), await bank.transfer(alice.customer, body)]
      expect([one.status, two.status]).toEqual([201, 201])
      expect(one.json.id).not.toBe(two.json.id)
      expect(two.json.balanceAfter).toBe(one.json.balanceAfter - 1_000)
    })

    it('GET /transfers/{id} shows the entry to the client that made it, 404 to anyone else', async () => {
      const made = await bank.transfer(alice.customer, { from: alice.accounts[0]!, to: alice.accounts[1]!, amount: 500 })
      const read = await bank.as(alice.customer, { path: made.headers.location! })
      expect(read.status).toBe(200)
      expect(read.json).toEqual({ id: made.json.id, from: made.json.from, to: made.json.to, amount: 500, createdAt: made.json.createdAt })
      const other = await bank.as(bob.customer, { path: made.headers.location! })
      expect(other.status).toBe(404)
      expect(other.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect((await bank.as(alice.customer, { path: '/transfers/tr_nope' })).status).toBe(404)
      expect((await bank.as(alice.customer, { path: '/deposits/dp_nope' })).status).toBe(404)
      // A deposit id is not a transfer.
      const dep = await bank.deposit(alice.customer, { to: alice.accounts[1]!, amount: 1 })
      expect((await bank.as(alice.customer, { path: `/transfers/${dep.json.id}` })).status).toBe(404)
    })

    it("POST /deposits credits one of the client's own accounts: 201 with Location; 403 for another client's account", async () => {
      const before = await bank.ledger()
      const to = bob.accounts[0]!
      const r = await bank.deposit(bob.customer, { to, amount: 70_000 })
      expect(r.status).toBe(201)
      expect(Object.keys(r.json)).toEqual(['id', 'to', 'amount', 'createdAt', 'balanceAfter'])
      expect(r.json).toMatchObject({ id: expect.stringMatching(/^dp_/), to, amount: 70_000, balanceAfter: balancesOf(before)[to]! + 70_000 })
      expect(r.headers.location).toBe(`/deposits/${r.json.id}`)
      const read = await bank.as(bob.customer, { path: r.headers.location! })
      expect(read.json).toEqual({ id: r.json.id, from: null, to, amount: 70_000, createdAt: r.json.createdAt })
      const after = await bank.ledger()
      expect(after.entries.at(-1)).toMatchObject({ id: r.json.id, kind: 'deposit', from: null, to, clientId: bob.customer.id })

      expectProblemReply(await bank.deposit(alice.customer, { to, amount: 1 }), 403, '/problems/not-account-owner')
      expectProblemReply(await bank.deposit(alice.customer, { to: 'acc_nope', amount: 1 }), 404, '/problems/account-not-found')
      expect(balancesOf(await bank.ledger())).toEqual(balancesOf(after))
    })

    it('memo and metadata (nested JSON) are accepted and change nothing the bank does', async () => {
      const before = balancesOf(await bank.ledger())
      const body = {
        from: alice.accounts[0]!,
        to: bob.accounts[0]!,
        amount: 3_000,
        memo: '월세 · rent ✓',
        metadata: { order: { id: 7, tags: ['a', null] }, ok: true },
      }
      const r = await bank.transfer(alice.customer, body)
      expect(r.status).toBe(201)
      expect(r.json.balanceAfter).toBe(before[body.from]! - 3_000)
      expect((await bank.deposit(bob.customer, { to: bob.accounts[0]!, amount: 1, memo: '', metadata: {} } as never)).status).toBe(201)
    })

    it('refusals are problems that move nothing: 402 with balance and amount, 403 not yours, 404 unknown account', async () => {
      const before = await bank.ledger()
      const small = alice.accounts[1]!
      const have = balancesOf(before)[small]!
      const poor = await bank.transfer(alice.customer, { from: small, to: bob.accounts[0]!, amount: have + 1 })
      expectProblemReply(poor, 402, '/problems/insufficient-funds')
      expect(poor.json).toMatchObject({ balance: have, amount: have + 1 })
      expectProblemReply(await bank.transfer(bob.customer, { from: small, to: bob.accounts[0]!, amount: 1 }), 403, '/problems/not-account-owner')
      expectProblemReply(await bank.transfer(alice.customer, { from: small, to: 'acc_nope', amount: 1 }), 404, '/problems/account-not-found')
      expectProblemReply(await bank.transfer(alice.customer, { from: 'acc_nope', to: small, amount: 1 }), 404, '/problems/account-not-found')
      // Exactly the whole balance is allowed, and leaves zero, never less.
      const all = await bank.transfer(alice.customer, { from: small, to: alice.accounts[0]!, amount: have })
      expect(all.status).toBe(201)
      expect(all.json.balanceAfter).toBe(0)
      expectProblemReply(await bank.transfer(alice.customer, { from: small, to: bob.accounts[0]!, amount: 1 }), 402, '/problems/insufficient-funds')
      const after = await bank.ledger()
      expect(after.entries.length).toBe(before.entries.length + 1)
      await bank.transfer(alice.customer, { from: alice.accounts[0]!, to: small, amount: have }) // put it back
    })

    it('an unknown route is a 404 not-found problem', async () => {
      expectProblemReply(await bank.send({ path: '/nope' }), 404, '/problems/not-found')
      expectProblemReply(await bank.send({ method: 'DELETE', path: '/transfers' }), 404, '/problems/not-found')
    })

    it('GET /admin/ledger lists accounts and entries in creation order, and they add up', async () => {
      const l = await bank.ledger()
      expect(l.accounts.slice(0, 3).map((a) => a.id)).toEqual([...alice.accounts, bob.accounts[0]])
      expect(l.accounts[0]).toEqual({ id: alice.accounts[0], clientId: alice.customer.id, balance: expect.any(Number), openedWith: 1_000_000 })
      const times = l.entries.map((e) => e.createdAt)
      expect([...times].sort()).toEqual(times)
      expectConserved(l)
    })
  })

  // The bad-input corpus (one table of cases, run against the SQLite and the
  // PostgreSQL bank alike) is test/bank.badInput.test.ts; here, what needs a
  // stream or a compressed body.
  describe('bad input never yields a 500 and never changes a balance', () => {
    const A = () => alice.accounts[0]!
    const B = () => bob.accounts[0]!
    let before: Ledger
    beforeAll(async () => {
      before = await bank.ledger()
    })

    it('a 10 MB body sent chunked (no Content-Length) is refused with 413 too', async () => {
      const chunk = Buffer.alloc(64 * 1024, 'x')
      let sent = 0
      const stream = new Readable({
        read() {
          if (sent === 0) this.push(`{"from":"${A()}","to":"${B()}","amount":5000,"memo":"`)
          if (sent >= 10 * 1024 * 1024) return void this.push(null)
          sent += chunk.length
          this.push(sent >= 10 * 1024 * 1024 ? Buffer.concat([chunk, Buffer.from('"}')]) : chunk)
        },
      })
      const res = await request(`${bank.url}/transfers`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${alice.customer.apiKey}`, 'Content-Type': 'application/json' },
        body: stream,
      })
      expect(res.statusCode).toBe(413)
      expect(JSON.parse(await res.body.text())).toMatchObject({ type: '/problems/body-too-large', status: 413 })
      expect(await bank.ledger()).toEqual(before)
    })

    it('a gzip bomb (10 KB that inflates to 10 MB) is refused with 413', async () => {
      const bomb = gzipSync(`{"from":"${A()}","to":"${B()}","amount":5000,"memo":"${'x'.repeat(10 * 1024 * 1024)}"}`)
      expect(bomb.length).toBeLessThan(16_384)
      const res = await request(`${bank.url}/transfers`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${alice.customer.apiKey}`, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
        body: bomb,
      })
      expect(res.statusCode).toBe(413)
      expect(JSON.parse(await res.body.text())).toMatchObject({ type: '/problems/body-too-large', status: 413 })
      expect(await bank.ledger()).toEqual(before)
    })

    it('the server logged no internal error during all that', () => {
      expect(tb.server.logTail(10_000)).not.toMatch(/error|\n\s+at /i)
    })
  })

  describe('bodies the bank accepts as written', () => {
    const body = (extra: Record<string, unknown> = {}) => ({ from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 700, ...extra })

    it.for(['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON;CHARSET=UTF-8', 'application/json; charset="UTF-8"'])(
      'Content-Type: %s is UTF-8 JSON',
      async (type) => {
        const r = await bank.transfer(alice.customer, body(), { headers: { 'Content-Type': type } })
        expect(r.status, r.text).toBe(201)
      },
    )

    // Exact whole numbers in another spelling are the amount the client wrote (a
    // Python client's retry sends 250000.0): only literals that are not exactly
    // whole, which JSON.parse would round, are refused (see the 400s above).
    it.for(['700.0', '7e2', '7.00E+2', '70000e-2'])('amount written %s moves exactly 700 won', async (literal) => {
      const before = balancesOf(await bank.ledger())
      const r = await bank.transfer(alice.customer, body(), { raw: JSON.stringify(body()).replace('"amount":700', `"amount":${literal}`) })
      expect(r.status, r.text).toBe(201)
      expect(r.json.amount).toBe(700)
      expect(balancesOf(await bank.ledger())[alice.accounts[0]!]).toBe(before[alice.accounts[0]!]! - 700)
    })

    it(`a body exactly ${MAX_JSON_DEPTH} levels deep is accepted`, async () => {
      const metadata = { a: JSON.parse(`${'['.repeat(MAX_JSON_DEPTH - 2)}${']'.repeat(MAX_JSON_DEPTH - 2)}`) }
      const r = await bank.transfer(alice.customer, body({ metadata }))
      expect(r.status, r.text).toBe(201)
    })
  })

  describe('route identity: one route, however the URL is spelled', () => {
    it('a layer gets op.route as the bank names the route, and op.path as the client typed it', async () => {
      const config = loadConfig({ LAB_DB: ':memory:' })
      const tables = await inProcessStore(store)
      const seenOps: Array<{ route: string; path: string }> = []
      const layer: Layer<StoreKind> = {
        async handle(op) {
          seenOps.push({ route: op.route, path: op.path })
          return jsonOutcome(200, {})
        },
      }
      const server = createHttpServer(createApp(tables, config, layer)).listen(0, '127.0.0.1')
      await once(server, 'listening')
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        const post = (path: string, body: unknown, token: string) =>
          request(`${url}${path}`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
            body: JSON.stringify(body),
          })
        const { apiKey } = (await (await post('/admin/clients', { name: 'x' }, config.adminToken)).body.json()) as { apiKey: string }
        for (const path of [...TRANSFER_SPELLINGS, '/transfers?via=query'])
          expect((await post(path, { from: 'acc_a', to: 'acc_b', amount: 1 }, apiKey)).statusCode).toBe(200)
        for (const path of ['/DEPOSITS/', '/deposits']) expect((await post(path, { to: 'acc_a', amount: 1 }, apiKey)).statusCode).toBe(200)
        expect(seenOps).toEqual([
          ...TRANSFER_SPELLINGS.map((path) => ({ route: 'POST /transfers', path })),
          { route: 'POST /transfers', path: '/transfers' },
          { route: 'POST /deposits', path: '/DEPOSITS/' },
          { route: 'POST /deposits', path: '/deposits' },
        ])
      } finally {
        server.close()
        tables.close()
      }
    })

    it("a layer gets op.headers: the request's headers as Node has them, lower-case names, repeated lines joined, frozen", async () => {
      const config = loadConfig({ LAB_DB: ':memory:' })
      const tables = await inProcessStore(store)
      const seenHeaders: Array<Readonly<Record<string, string>>> = []
      const layer: Layer<StoreKind> = {
        async handle(op) {
          seenHeaders.push(op.headers)
          return jsonOutcome(200, {})
        },
      }
      const server = createHttpServer(createApp(tables, config, layer)).listen(0, '127.0.0.1')
      await once(server, 'listening')
      try {
        const port = (server.address() as AddressInfo).port
        const created = await request(`http://127.0.0.1:${port}/admin/clients`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${config.adminToken}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name: 'x' }),
        })
        const { apiKey } = (await created.body.json()) as { apiKey: string }
        const body = JSON.stringify({ to: 'acc_a', amount: 1 })
        const reply = await sendRaw(
          port,
          [
            'POST /deposits HTTP/1.1',
            `Host: 127.0.0.1:${port}`,
            `Authorization: Bearer ${apiKey}`,
            'Content-Type: application/json',
            `Content-Length: ${Buffer.byteLength(body)}`,
            'Idempotency-Key: k-1',
            'X-Trace: one',
            'x-trace: two',
            'X-Request-ID: r-9',
            'Connection: close',
            '',
            body,
          ].join('\r\n'),
        )
        expect(reply?.status).toBe(200)
        const [headers] = seenHeaders
        expect(headers).toMatchObject({
          host: `127.0.0.1:${port}`,
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': 'k-1',
          'x-trace': 'one, two',
          'x-request-id': 'r-9',
        })
        expect(Object.keys(headers!).every((name) => name === name.toLowerCase())).toBe(true)
        expect(Object.isFrozen(headers)).toBe(true)
      } finally {
        server.close()
        tables.close()
      }
    })
  })

  describe('hostile HTTP: a problem+json answer, nothing moved, the server still up', () => {
    const port = () => Number(new URL(bank.url).port)
    const auth = () => `Authorization: Bearer ${alice.customer.apiKey}`
    const transfer = () => JSON.stringify({ from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 5_000 })
    const post = (lines: string[], body: string | Buffer = transfer()) => rawRequest('POST', '/transfers', ['Host: bank', auth(), ...lines], body)
    const json = 'Content-Type: application/json'
    type RawCase = { what: string; bytes: () => Buffer; status: number; type: string }
    const cases: RawCase[] = [
      {
        what: 'Idempotency-Key on two lines, the same key',
        bytes: () => post([json, 'Idempotency-Key: k-7', 'Idempotency-Key: k-7']),
        status: 400,
        type: '/problems/idempotency-key-malformed',
      },
      {
        what: 'Idempotency-Key on two lines, two keys',
        bytes: () => post([json, 'Idempotency-Key: a', 'Idempotency-Key: b']),
        status: 400,
        type: '/problems/idempotency-key-malformed',
      },
      { what: 'a body without Content-Type', bytes: () => post([]), status: 415, type: '/problems/unsupported-media-type' },
      {
        what: 'a body that is not valid UTF-8',
        bytes: () => post([json], Buffer.from(Buffer.from(transfer().replace('}', ',"memo":"XX"}')).map((x) => (x === 0x58 ? 0xff : x)))),
        status: 400,
        type: '/problems/malformed-json',
      },
      // What Node's parser refuses before Express: answered in clientError (bank/httpServer.ts).
      { what: 'a header value with \\x01', bytes: () => post([json, 'X-Note: a\x01b']), status: 400, type: '/problems/bad-request' },
      { what: 'a header value with DEL', bytes: () => post([json, 'X-Note: a\x7fb']), status: 400, type: '/problems/bad-request' },
      { what: 'a header value with NUL', bytes: () => post([json, 'X-Note: a\x00b']), status: 400, type: '/problems/bad-request' },
      { what: 'a header value with a bare CR', bytes: () => post([json, 'X-Note: a\rb']), status: 400, type: '/problems/bad-request' },
      { what: 'an obs-fold continuation line', bytes: () => post([json, 'X-Note: a', ' folded']), status: 400, type: '/problems/bad-request' },
      {
        what: 'Content-Length together with Transfer-Encoding',
        bytes: () => post([json, 'Transfer-Encoding: chunked']),
        status: 400,
        type: '/problems/bad-request',
      },
      { what: 'a 20 KB header', bytes: () => post([json, `X-Big: ${'x'.repeat(20 * 1024)}`]), status: 431, type: '/problems/headers-too-large' },
      { what: 'an HTTP/2 preface (PRI * HTTP/2.0)', bytes: () => Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), status: 400, type: '/problems/bad-request' },
      // What Node would answer itself, with a bare status line, unless the server takes over.
      { what: 'no Host header', bytes: () => rawRequest('POST', '/transfers', [auth(), json], transfer()), status: 400, type: '/problems/bad-request' },
      { what: 'Expect: 200-ok', bytes: () => post([json, 'Expect: 200-ok']), status: 417, type: '/problems/expectation-failed' },
      { what: 'CONNECT', bytes: () => rawRequest('CONNECT', 'bank.example:443', ['Host: bank.example:443']), status: 404, type: '/problems/not-found' },
    ]

    it('a chunk that announces 2^64 bytes and sends none is answered 408 once the request is overdue (15 s), not after Node’s 300 s', async () => {
      const before = await bank.ledger()
      const head = rawRequest('POST', '/transfers', ['Host: bank', auth(), json, 'Transfer-Encoding: chunked'])
      const reply = await sendRaw(port(), Buffer.concat([head, Buffer.from('ffffffffffffffff\r\n{"from"')]), 60_000)
      expect(reply?.status, reply?.body).toBe(408)
      expect(reply?.json.type).toBe('/problems/request-timeout')
      expect(await bank.ledger()).toEqual(before)
    }, 90_000)

    it.for(cases)('$what → $status $type', async (c) => {
      const before = await bank.ledger()
      const bytes = c.bytes()
      const reply = await sendRaw(port(), bytes)
      expect(reply, 'an answer, not a closed connection').toBeDefined()
      seen.push(asExchange(bytes, reply!))
      expect(reply!.status, reply!.body).toBe(c.status)
      expect(reply!.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(reply!.json).toMatchObject({ type: c.type, status: c.status, title: expect.any(String), detail: expect.any(String) })
      expect(Number(reply!.headers['content-length'])).toBe(Buffer.byteLength(reply!.body))
      expect(await bank.ledger()).toEqual(before)
      expect((await bank.send({ path: '/health' })).status).toBe(200)
    })

    it('the same key on one line executes once, and then is ignored by stage 0 as always', async () => {
      const before = await bank.ledger()
      const reply = await sendRaw(port(), post([json, 'Idempotency-Key: k-7']))
      expect(reply?.status).toBe(201)
      expect((await bank.ledger()).entries.length).toBe(before.entries.length + 1)
    })
  })

  describe('the core-banking simulator', () => {
    it('GET /admin/core shows the settings; hold keeps a transfer in flight with nothing moved until released', async () => {
      expect(await bank.core({})).toEqual({ delayMs: 0, hold: false, holdNext: 0, failNext: 0, crashAfterCommit: false, inflight: 0, held: [] })
      const before = await bank.ledger()
      expect(await bank.core({ hold: true })).toEqual({ delayMs: 0, hold: true, holdNext: 0, failNext: 0, crashAfterCommit: false, inflight: 0, held: [] })
      const pending = [1, 2].map(() => bank.transfer(alice.customer, { from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 10 }))
      await bank.waitForInflight(2)
      expect((await admin({ path: '/admin/core' })).json).toEqual({
        delayMs: 0,
        hold: true,
        holdNext: 0,
        failNext: 0,
        crashAfterCommit: false,
        inflight: 2,
        held: [],
      })
      expect(await bank.ledger(), 'a held transfer has not committed').toEqual(before)
      expect((await bank.core({ hold: false })).hold).toBe(false)
      const replies = await Promise.all(pending)
      expect(replies.map((r) => r.status)).toEqual([201, 201])
      expect((await bank.core({})).inflight).toBe(0)
      expect((await bank.ledger()).entries.length).toBe(before.entries.length + 2)
    })

    it('failNext: n makes the next n calls answer 503 core-unavailable with Retry-After, and nothing moves', async () => {
      const before = await bank.ledger()
      expect((await bank.core({ failNext: 2 })).failNext).toBe(2)
      for (const send of [
        () => bank.transfer(alice.customer, { from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 10 }),
        () => bank.deposit(alice.customer, { to: alice.accounts[0]!, amount: 10 }),
      ]) {
        const r = await send()
        expectProblemReply(r, 503, '/problems/core-unavailable')
        expect(r.headers['retry-after']).toBe('1')
      }
      expect(await bank.ledger()).toEqual(before)
      expect((await bank.core({})).failNext).toBe(0)
      expect((await bank.transfer(alice.customer, { from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 10 })).status).toBe(201)
    })

    it('holdNext holds the next call alone, under a number, while later calls go through; letGo lets it go on, or fail there', async () => {
      const before = await bank.ledger()
      const move = () => bank.transfer(alice.customer, { from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 10 })
      expect(await bank.core({ holdNext: 1 })).toMatchObject({ holdNext: 1, held: [] })
      const first = move()
      await bank.waitForInflight(1)
      const { held: [call] = [], holdNext } = await bank.core({})
      expect([typeof call, holdNext]).toEqual(['number', 0])
      expect((await move()).status, 'a later call goes through while the first waits').toBe(201)
      expect((await bank.ledger()).entries.length).toBe(before.entries.length + 1)
      await bank.core({ holdNext: 1 })
      const second = move()
      await bank.waitForInflight(2)
      const held = (await bank.core({})).held!
      expect(held).toHaveLength(2)
      expect((await bank.core({ letGo: { call: call!, fails: false } })).held).toEqual(held.filter((c) => c !== call))
      expect((await first).status).toBe(201)
      await bank.core({ letGo: { call: held.find((c) => c !== call)!, fails: true } })
      expectProblemReply(await second, 503, '/problems/core-unavailable')
      expect((await bank.ledger()).entries.length, 'two moved; the one that failed in the core did not').toBe(before.entries.length + 2)
      // hold: false lets every call held alone go too.
      await bank.core({ holdNext: 1 })
      const third = move()
      await bank.waitForInflight(1)
      expect((await bank.core({ hold: false })).held).toEqual([])
      expect((await third).status).toBe(201)
      expect(await bank.core({})).toMatchObject({ holdNext: 0, held: [], inflight: 0 })
    })

    it('failNext applies to held calls when they are released', async () => {
      const before = await bank.ledger()
      await bank.core({ hold: true, failNext: 1 })
      const pending = bank.transfer(alice.customer, { from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 10 })
      await bank.waitForInflight(1)
      await bank.core({ hold: false })
      expectProblemReply(await pending, 503, '/problems/core-unavailable')
      expect(await bank.ledger()).toEqual(before)
    })

    it('crashAfterCommit: the next transfer commits, then the process dies (SIGKILL) before answering; after a restart the ledger has it', async () => {
      // A server of its own: this one is killed.
      const { server, bank: b } = await startBank(scratch.path, { env: await storeEnv(store) })
      try {
        const frank = await customerWith(b, 10_000, 0)
        const body = { from: frank.accounts[0]!, to: frank.accounts[1]!, amount: 4_000 }
        // A request that fails in the core commits nothing, and so does not fire it.
        expect(await b.core({ crashAfterCommit: true, failNext: 1 })).toMatchObject({ crashAfterCommit: true, failNext: 1 })
        expectProblemReply(await b.transfer(frank.customer, body), 503, '/problems/core-unavailable')
        expect(server.alive).toBe(true)
        const pending = b.transfer(frank.customer, body).then(
          (r) => `answered HTTP ${r.status}`,
          (e: Error) => e,
        )
        const dropped = await pending
        expect(dropped, 'the connection drops: no answer').toBeInstanceOf(Error)
        expect(await server.exitsWithin(10_000), 'the process is gone').toBe(true)
        expect(server.unexpectedExit).toBe('killed by SIGKILL')
        await server.start()
        const after = await b.ledger()
        const moved = after.entries.filter((e) => e.from === body.from && e.to === body.to)
        expect(moved.map((e) => e.amount)).toEqual([4_000])
        expect(balancesOf(after)).toMatchObject({ [body.from]: 6_000, [body.to]: 4_000 })
        // A restart starts disarmed.
        expect((await b.core({})).crashAfterCommit).toBe(false)
        expect((await b.transfer(frank.customer, body)).status).toBe(201)
      } finally {
        await server.stop()
      }
    })

    it('delayMs slows each call down by at least that long', async () => {
      await bank.core({ delayMs: 300 })
      // A lower bound only: a loaded machine makes a call slower, never faster.
      const t0 = performance.now()
      const r = await bank.transfer(alice.customer, { from: alice.accounts[0]!, to: bob.accounts[0]!, amount: 10 })
      const took = performance.now() - t0
      await bank.core({ delayMs: 0 })
      expect(r.status).toBe(201)
      expect(took).toBeGreaterThanOrEqual(290)
    })
  })
})

describe('route identity across the stages', () => {
  // Stage 0 executes each: proof that every spelling reaches the transfer route. Each stage on its own store, stage 0 on both.
  it.for([
    ...[0, 1, 2, 3, 4, 5].map((stage) => ({ stage, store: 'sqlite' as const })),
    { stage: 0, store: 'postgres' as const },
    { stage: 6, store: 'postgres' as const },
  ])('stage $stage on $store: one key on the five spellings moves the money once (stage 0: once per request)', async ({ stage, store }) => {
    const folder = course.stages[stage]!.folder
    const { server, bank: b } = await startBank(scratch.path, {
      stageDir: resolve(repoRoot, 'solutions', folder),
      env: await storeEnv(store),
      record: (e) => seen.push(e),
    })
    try {
      const payer = await customerWith(b, 100_000)
      const payee = await customerWith(b, 0)
      const body = { from: payer.accounts[0]!, to: payee.accounts[0]!, amount: 1_234 }
      const replies = []
      for (const path of TRANSFER_SPELLINGS) replies.push(await b.send(b.postSpec(payer.customer, path, body, { key: `one-intent-${stage}` })))
      expect(
        replies.map((r) => r.status).every((s) => s === 200 || s === 201),
        replies.map((r) => `${r.status} ${r.text}`).join('\n'),
      ).toBe(true)
      const after = await b.ledger()
      const times = stage === 0 ? TRANSFER_SPELLINGS.length : 1
      expect(after.entries.length, `${folder}: ledger rows`).toBe(times)
      expect(balancesOf(after)[payer.accounts[0]!]).toBe(100_000 - times * 1_234)
    } finally {
      await server.stop()
    }
  })
})

/** Money is conserved and every balance equals its opening plus its ledger rows. */
function expectConserved(l: Ledger) {
  const expected = new Map(l.accounts.map((a) => [a.id, a.openedWith]))
  for (const e of l.entries) {
    if (e.from) expected.set(e.from, expected.get(e.from)! - e.amount)
    expected.set(e.to, expected.get(e.to)! + e.amount)
  }
  expect(balancesOf(l)).toEqual(Object.fromEntries(expected))
  expect(l.accounts.every((a) => a.balance >= 0)).toBe(true)
}

describe('the stage 5 solution with a 4 MB body limit', () => {
  let five: TestBank
  let payer: { customer: Customer; accounts: string[] }
  const policy = 'idempotency-key-policy'
  beforeAll(async () => {
    five = await startBank(scratch.path, {
      stageDir: resolve(repoRoot, 'solutions', '05-scope-ttl'),
      env: { LAB_BODY_LIMIT: String(4 * 1024 * 1024) },
      record: (e) => seen.push(e),
    })
    payer = await customerWith(five.bank, 100_000, 0)
  })
  afterAll(async () => {
    await five?.server.stop()
  })
  const body = (extra: Record<string, unknown> = {}) => ({ from: payer.accounts[0]!, to: payer.accounts[1]!, amount: 10, ...extra })

  it.for([
    ['10,000 nested arrays', `${'['.repeat(10_000)}${']'.repeat(10_000)}`],
    ['100,000 nested arrays', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
    ['100,000 nested objects', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`],
  ])('%s in metadata get 400 json-too-deep, before the layer (no policy header) and never a 500', async ([, deep]) => {
    const before = await five.bank.ledger()
    const r = await five.bank.transfer(payer.customer, body(), { key: 'deep', raw: JSON.stringify(body()).replace('}', `,"metadata":{"a":${deep}}}`) })
    expectProblemReply(r, 400, '/problems/json-too-deep')
    expect(r.json.maxDepth).toBe(MAX_JSON_DEPTH)
    expect(r.headers[policy]).toBeUndefined()
    expect(await five.bank.ledger()).toEqual(before)
  })

  it('a lone surrogate gets the answer every invalid body gets: errors listed, no policy header', async () => {
    const lone = await five.bank.transfer(payer.customer, body(), { key: 'lone', raw: JSON.stringify(body()).replace('}', ',"memo":"\\udfff"}') })
    const wrongType = await five.bank.transfer(payer.customer, body({ amount: 'ten' }), { key: 'typed' })
    for (const r of [lone, wrongType]) {
      expectProblemReply(r, 400, '/problems/invalid-body')
      expect(r.json.errors).toEqual([{ path: expect.any(String), message: expect.any(String) }])
      expect(r.headers[policy]).toBeUndefined()
    }
    expect(lone.json.errors[0].path).toBe('memo')
  })

  it("two Idempotency-Key lines get the layer's own malformed-key answer (policy header included); nothing executes", async () => {
    const before = await five.bank.ledger()
    const port = Number(new URL(five.bank.url).port)
    const lines = ['Host: bank', `Authorization: Bearer ${payer.customer.apiKey}`, 'Content-Type: application/json']
    const twice = await sendRaw(port, rawRequest('POST', '/transfers', [...lines, 'Idempotency-Key: k', 'Idempotency-Key: k'], JSON.stringify(body())))
    const empty = await five.bank.transfer(payer.customer, body(), { key: '' })
    for (const r of [twice!, empty]) {
      expect(r.status).toBe(400)
      expect(r.json.type).toBe('/problems/idempotency-key-malformed')
      expect(r.headers[policy]).toMatch(/scope="client route"/)
    }
    expect(await five.bank.ledger()).toEqual(before)
  })

  it('a comma is fine inside a quoted key: "a, b" is one key, and its retry is a replay', async () => {
    const before = await five.bank.ledger()
    const first = await five.bank.transfer(payer.customer, body(), { key: '"order 7, line 2"' })
    const retry = await five.bank.transfer(payer.customer, body(), { key: '"order 7, line 2"' })
    expect([first.status, retry.status]).toEqual([201, 201])
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect((await five.bank.ledger()).entries.length).toBe(before.entries.length + 1)
  })

  it('the server logged no internal error during all that', () => {
    expect(five.server.logTail(10_000)).not.toMatch(/error|\n\s+at /i)
  })
})

describe('processes on one SQLite file', () => {
  let tb: TestBank
  let bank: BankClient
  let bob: { customer: Customer; accounts: string[] }
  beforeAll(async () => {
    tb = await startBank(scratch.path, { record: (e) => seen.push(e) })
    bank = tb.bank
    bob = await customerWith(bank, 300_000)
  })
  afterAll(async () => {
    await tb?.server.stop()
  })

  it('two server processes on one database file both serve it (WAL), and never overdraw together', async () => {
    const second = await startBank(scratch.path, { dbPath: tb.server.options.dbPath, adminToken: tb.adminToken })
    try {
      const db = new Database(tb.server.options.dbPath, { readonly: true, fileMustExist: true })
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
      db.close()
      // A client made on one process works on the other.
      const carol = await customerWith(second.bank, 100_000)
      expect((await bank.as(carol.customer, { path: `/accounts/${carol.accounts[0]}` })).json.balance).toBe(100_000)
      // Ten transfers of a quarter of the balance, five per process, all held
      // in the core and released together: exactly four may execute.
      const before = await bank.ledger()
      const body = { from: carol.accounts[0]!, to: bob.accounts[0]!, amount: 25_000 }
      await Promise.all([bank.core({ hold: true }), second.bank.core({ hold: true })])
      const pending = [bank, second.bank].flatMap((b) => [1, 2, 3, 4, 5].map(() => b.transfer(carol.customer, body)))
      await Promise.all([bank.waitForInflight(5), second.bank.waitForInflight(5)])
      await Promise.all([bank.core({ hold: false }), second.bank.core({ hold: false })])
      const statuses = (await Promise.all(pending)).map((r) => r.status).sort()
      expect(statuses).toEqual([201, 201, 201, 201, 402, 402, 402, 402, 402, 402])
      const after = await second.bank.ledger()
      expect(after.entries.length).toBe(before.entries.length + 4)
      expect(balancesOf(after)[carol.accounts[0]!]).toBe(0)
      expect(after).toEqual(await bank.ledger())
      expectConserved(after)
    } finally {
      await second.server.stop()
    }
  })

  it('SIGTERM makes an idle server close cleanly and exit 0, without waiting for its grace timer', async () => {
    const { server } = await startBank(scratch.path)
    process.kill(server.pid!, 'SIGTERM')
    await exitOf(server)
    expect(server.unexpectedExit).toBe('exited with code 0')
    // Only the clean path closes the database, and closing the last
    // connection checkpoints and removes the WAL: the 2 s forced exit leaves it.
    expect(existsSync(`${server.options.dbPath}-wal`), 'the WAL is left: the server exited by its grace timer').toBe(false)
  })

  it('SIGTERM lets an in-flight transfer finish and commit, then exits 0', async () => {
    const { server, bank: b } = await startBank(scratch.path)
    const dave = await customerWith(b, 10_000, 0)
    await b.core({ delayMs: 600 })
    const pending = b.transfer(dave.customer, { from: dave.accounts[0]!, to: dave.accounts[1]!, amount: 4_000 })
    await b.waitForInflight(1)
    process.kill(server.pid!, 'SIGTERM')
    const reply = await pending
    expect(reply.status).toBe(201)
    await exitOf(server)
    expect(server.unexpectedExit).toBe('exited with code 0')
    const db = new Database(server.options.dbPath, { readonly: true, fileMustExist: true })
    expect(db.prepare('SELECT balance FROM accounts WHERE id = ?').get(dave.accounts[1])).toEqual({ balance: 4_000 })
    db.close()
  })

  it('SIGTERM with a transfer stuck in the core exits 0 by its grace timer, having committed nothing', async () => {
    const { server, bank: b } = await startBank(scratch.path)
    const erin = await customerWith(b, 10_000, 0)
    await b.core({ hold: true })
    const pending = b.transfer(erin.customer, { from: erin.accounts[0]!, to: erin.accounts[1]!, amount: 4_000 }).catch((e: Error) => e)
    await b.waitForInflight(1)
    process.kill(server.pid!, 'SIGTERM')
    await exitOf(server)
    expect(server.unexpectedExit).toBe('exited with code 0')
    // The stuck request kept server.close() from finishing: it was the grace
    // timer that exited, without closing the database (its WAL is still there).
    expect(existsSync(`${server.options.dbPath}-wal`), 'the server closed cleanly although a request was stuck').toBe(true)
    expect(await pending).toBeInstanceOf(Error)
    const db = new Database(server.options.dbPath, { readonly: true, fileMustExist: true })
    expect(db.prepare('SELECT count(*) AS n FROM ledger').get()).toEqual({ n: 0 })
    db.close()
  })
})

/** Waits for the exit; the limit is only there so a server that never exits fails the test (far above the 2 s grace). */
async function exitOf(server: TestBank['server'], limitMs = 30_000) {
  const exited = await server.exitsWithin(limitMs)
  expect(exited, `the server still runs ${limitMs} ms after SIGTERM`).toBe(true)
}

// Last, over every response this file received: each problem type is one
// CONTRACT.md documents, with the documented status.
describe('CONTRACT.md', () => {
  it('documents every problem type the bank sent in these tests', () => {
    const contract = readFileSync(resolve(repoRoot, 'CONTRACT.md'), 'utf8')
    const documented = new Set([...contract.matchAll(/^\|\s*(\d{3})\s*\|\s*`(\/problems\/[a-z-]+)`/gm)].map((m) => `${m[1]} ${m[2]}`))
    expect(documented.size).toBeGreaterThan(5)
    const sent = new Set<string>()
    for (const e of seen) {
      if (!e.response?.headers['content-type']?.startsWith('application/problem+json')) continue
      const body = JSON.parse(e.response.body) as { type: string }
      sent.add(`${e.response.status} ${body.type}`)
    }
    expect(sent.size).toBeGreaterThan(5)
    expect(
      [...sent].filter((s) => !documented.has(s)),
      'problem types sent but not in CONTRACT.md',
    ).toEqual([])
  })
})
