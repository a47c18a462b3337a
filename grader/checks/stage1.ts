// Stage 1: an Idempotency-Key is required, and a key claimed by an INSERT
// into a table with a PRIMARY KEY executes once, however its retries arrive:
// one after another, all at once, or spread over two server processes.
//
// These checks also run against every later stage, so they assert only the
// guarantee: a duplicate is not executed and is not an error. What it gets
// instead changes (200 already-processed here, 409 while in flight from stage
// 3, the stored 201 from stage 4); the ledger is the judge.
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import type { BankClient, Ledger, TransferBody } from '#harness/bankClient.ts'
import { expectEqual, expectProblem, expectStatus, fail, type Check, type CheckContext } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'
import { expectConsistent, is2xx, newRows, openParties, type Party } from './setup.ts'
import { heldBurst } from './heldBurst.ts'
import { inspectKeyTable } from './keyTable.ts'
import { KEY_MALFORMATIONS } from '../model/history.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage1.<key>).
const say = phrases('stage1', {
  duplicateNotError: '{why}: a duplicate is not an error, it gets a 2xx (200 "already-processed" at this stage)',
  oneProcessCauses:
    'a SELECT for the key, then an INSERT with an await between them (every copy sees no row yet); an INSERT OR IGNORE whose result is not looked at; the key recorded only after executing',
  eachProcessCauses:
    'a lock in memory (a Map, a Set), of which each process has its own; a SELECT, then an INSERT with an await between them, that one copy per process happened to pass',
  pastClaim: '{count} got past the claim into the core at the same instant (the core was held until every copy was decided)',
  candidates: '{past}. Candidates: {causes}',
  inProcess: '{count} in {process}',
  process: 'process {n}',
  eachLetOne: '{past}; executed (201): {split}. Each process let one copy through, as if each decided alone. Candidates: {causes}',
  oneLetMany: '{past}; executed (201): {split}. One process let {most} through by itself (simultaneous-retries tests one process alone). Candidates: {causes}',
  spread: ', split {copies} over {processes} processes on one database,',
  movedTimes: '{count} simultaneous requests with one Idempotency-Key{spread} moved the money {rows} times',
  movedTimesWhy: '{moved}: {evidence}',
  oneRow: '1 ledger row',
  rowsWithStatuses: '{rows} ledger rows ({statuses})',
  turnAwayNoError: 'a simultaneous duplicate must be turned away without an error',
  twoXxOr409: 'HTTP 2xx (or, from stage 3 on, 409 while the first is in flight)',
  rowCarriesAmount: 'the one ledger row carries the requested amount',
  strangerId: 'a 201 names a transfer that is not the one in the ledger',
  firstExecutes: 'the first POST {path} with a new key executes',
  retryExecutedAgain: 'retry {i} of POST {path} executed again: one key moved the money {rows} times',
  oneRowForKey: '1 ledger row for the key',
  rows: '{rows} ledger rows',
  retryOf: 'retry {i} of POST {path}',
  oneRowEach: '{attempts} attempts of one transfer and {attempts} of one deposit: exactly one ledger row each',
  balanceAfterRetries: 'balance of {account} after the retries',
  retriesNote: '{attempts} attempts each of a {amount} transfer and a deposit → one ledger row each',
  simultaneousNote: '{n} identical requests at the same instant: {past} got past the claim, {away} were turned away',
  twoProcessesNote: '{n} identical requests, {first} to one process and {second} to another, one database → one execution',
  newKeyNewTransfer: 'each new key is a new transfer and executes',
  differentKeysRows: '{m} different keys with the same body: {m} ledger rows',
  newKeyExecutes: 'a transfer with a new key executes',
  notUnique: 'the database does not make a key unique: {reason}',
  keysLive: 'keys live in {table}.{column}, unique by {index} ({columns})',
  withoutKey: 'POST {path} without an Idempotency-Key',
  noKeyNoMoney: 'a request without a key moves no money',
  emptyKey: 'an empty key',
  emptyQuotedKey: 'an empty quoted key',
  tabKey: 'a key with a tab in it',
  nonAsciiKey: 'a key with a non-ASCII character in it',
  isMalformed: '{what} is malformed',
  quotedMalformed: 'a quoted key {what} is malformed',
  malformedNoMoney: 'a request with a malformed key moves no money',
  edgesValid: 'a key of {length} characters with a space and a ~ in it is printable ASCII: valid, and it executes',
  oneCharValid: 'a key of one character is valid, and it executes',
  bare256: 'a bare key of 256 characters',
  quoted256: 'a quoted key of 256 characters',
  escaped256: 'a quoted key of 256 characters, some of them escaped',
  oneTooLong: '{what} is one too long',
  overlongNoMoney: 'a request with an over-long key moves no money',
  bare255: 'a bare key of exactly 255 characters',
  quoted255: 'a quoted key of exactly 255 characters (257 with its quotes)',
  escaped255: 'a quoted key of exactly 255 characters, {escaped} of them escaped ({written} as written)',
  validCountsKey: '{what} is valid and executes: the limit counts the key, not the header',
  lengthNote: '255 characters accepted bare, quoted and escaped; 256 refused bare, quoted and escaped',
  caseTaken: 'Idempotency-Key: {key} was taken for a key that differs from it only in letter case: keys are case-sensitive strings',
  newKey201: 'HTTP 201: a new key, a new transfer',
  caseGot: 'HTTP {status}, {rows} ledger row(s) for the two keys',
  caseTwoTransfers: 'two keys that differ in case: two transfers',
  firstFormExecutes: 'the first request, Idempotency-Key: {form}, executes',
  formsExecuted: 'Idempotency-Key: {first} and then {second} executed {rows} times',
  sameKeyBothForms: '1 ledger row: both spell the same key',
  secondIsRetry: 'Idempotency-Key: {second} after {first} is a retry of the same key',
})

/** Processing delay of the instance the simultaneous-retries check starts: the window a check-then-insert leaves open. */
const RACE_WINDOW_MS = 300

function expectNotExecutedAnswer(reply: Reply, why: Line): void {
  if (!is2xx(reply))
    fail(say('duplicateNotError', { why }), {
      exchange: reply.exchange,
      expected: 'HTTP 2xx',
      got: `HTTP ${reply.status}`,
    })
}

function transferPlan(ctx: CheckContext, a: Party, b: Party, maxAmount = 90_000, minAmount = 1_000): TransferBody {
  return { from: ctx.rng.pick(a.accounts), to: ctx.rng.pick(b.accounts), amount: ctx.rng.amount(minAmount, maxAmount) }
}

/**
 * Every printable ASCII character but four, each with a role of its own that
 * other checks give it: a space (trimmed at a bare value's ends; put inside by
 * key-format), `"` and `\\` (the quoted form's; keyNeedingEscapes), and `,`
 * (a bare one is two merged header lines, which the bank refuses).
 */
const KEY_CHARACTERS = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i))
  .filter((c) => !'"\\,'.includes(c))
  .join('')

/** Printable keys of a given length: what a client could put in the header. */
function printableKey(ctx: CheckContext, length: number): string {
  return Array.from({ length }, () => KEY_CHARACTERS[ctx.rng.int(0, KEY_CHARACTERS.length - 1)]).join('')
}

/** `key` with `char` put in at a random position strictly inside it. */
function inside(ctx: CheckContext, key: string, char: string): string {
  const at = ctx.rng.int(1, key.length - 1)
  return key.slice(0, at) + char + key.slice(at)
}

/** A key of `length` characters with a few `"` and `\` inside: characters the quoted form must escape. */
function keyNeedingEscapes(ctx: CheckContext, length: number): string {
  // One of each kind at least: a layer that unescapes only one of them must miscount.
  const escapes = ['"', '\\', ...Array.from({ length: ctx.rng.int(0, 4) }, () => ctx.rng.pick(['"', '\\']))]
  let key = printableKey(ctx, length - escapes.length)
  for (const char of escapes) key = inside(ctx, key, char)
  return key
}

/** The key as an RFC 8941 sf-string: quoted, with `"` and `\` escaped. */
const quoted = (key: string) => `"${key.replace(/["\\]/g, (c) => `\\${c}`)}"`

/** What lets simultaneous copies through inside one process: candidates, not a diagnosis (the grader sees behaviour, not code). */
const ONE_PROCESS_CAUSES = say('oneProcessCauses')
/** What lets one copy through in each process: candidates as well. */
const EACH_PROCESS_CAUSES = say('eachProcessCauses')

/** The copies sent to each process, in the order heldBurst answers them. */
type ProcessSplit = Array<{ name: Phrase; copies: number }>

/**
 * Why `executed` of `replies` ran (as evidence, then the causes it fits, as
 * candidates): how many got past the claim at once and, over several
 * processes, how many each process let through.
 */
function executionEvidence(replies: Reply[], reachedCore: number, split?: ProcessSplit): Phrase {
  const past = say('pastClaim', { count: reachedCore })
  if (!split || split.length < 2) return say('candidates', { past, causes: ONE_PROCESS_CAUSES })
  let at = 0
  const perProcess = split.map(({ name, copies }) => {
    const mine = replies.slice(at, (at += copies))
    return { name, created: mine.filter((r) => r.status === 201).length }
  })
  const counts = perProcess.map((p) => say('inProcess', { count: p.created, process: p.name }))
  const listed = listOf(counts)
  const most = Math.max(...perProcess.map((p) => p.created))
  if (most <= 1) return say('eachLetOne', { past, split: listed, causes: EACH_PROCESS_CAUSES })
  return say('oneLetMany', { past, split: listed, most, causes: ONE_PROCESS_CAUSES })
}

/**
 * Judges N requests that carried one key: the money moved exactly once, and
 * every other request was turned away without an error (a 2xx, or stage 3's
 * 409 for a request in flight). A failure says what was seen and the causes it fits.
 */
async function expectOneExecution(
  bank: BankClient,
  before: Ledger,
  body: TransferBody,
  { replies, reachedCore }: { replies: Reply[]; reachedCore: number },
  split?: ProcessSplit,
): Promise<void> {
  const rows = newRows(before, await bank.ledger()).filter((e) => e.from === body.from && e.to === body.to)
  const created = replies.filter((r) => r.status === 201)
  const spread =
    split && split.length > 1
      ? say('spread', {
          copies: listOf(
            split.map((p) => String(p.copies)),
            'and',
          ),
          processes: split.length,
        })
      : ''
  const moved = say('movedTimes', { count: replies.length, spread, rows: rows.length })
  const got = say('rowsWithStatuses', { rows: rows.length, statuses: replies.map((r) => r.status).join(', ') })
  if (rows.length > 1)
    fail(say('movedTimesWhy', { moved, evidence: executionEvidence(replies, reachedCore, split) }), {
      exchange: created[1]?.exchange ?? replies[0]?.exchange,
      expected: say('oneRow'),
      got,
    })
  if (rows.length !== 1) fail(moved, { exchange: created[1]?.exchange ?? replies[0]?.exchange, expected: say('oneRow'), got })
  const bad = replies.find((r) => !is2xx(r) && r.status !== 409)
  if (bad)
    fail(say('turnAwayNoError'), {
      exchange: bad.exchange,
      expected: say('twoXxOr409'),
      got: `HTTP ${bad.status}`,
    })
  expectEqual(rows[0]!.amount, body.amount, say('rowCarriesAmount'))
  const stranger = created.find((r) => r.json?.id !== rows[0]!.id)
  if (stranger) fail(say('strangerId'), { exchange: stranger.exchange })
}

const retriesExecuteOnce: Check = {
  id: 'retries-execute-once',
  title: 'A transfer and a deposit retried with the same key execute once',
  points: 5,
  hint: 'Claim the key (INSERT) before calling op.execute(); when the INSERT fails on the PRIMARY KEY, answer without executing.',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const before = await ctx.bank.ledger()
    const transfer = transferPlan(ctx, a, b)
    const deposit = { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() }
    const attempts = ctx.rng.int(3, 5)
    for (const [path, body] of [
      ['/transfers', transfer],
      ['/deposits', deposit],
    ] as const) {
      const spec = ctx.bank.postSpec(a.customer, path, body, { key: ctx.rng.uuid() })
      const first = await ctx.bank.send(spec)
      expectStatus(first, 201, say('firstExecutes', { path }))
      for (let i = 1; i < attempts; i++) {
        const retry = await ctx.bank.send(spec)
        const rows = newRows(before, await ctx.bank.ledger()).filter((e) => e.to === body.to)
        if (rows.length > 1)
          fail(say('retryExecutedAgain', { i, path, rows: rows.length }), {
            exchange: retry.exchange,
            expected: say('oneRowForKey'),
            got: say('rows', { rows: rows.length }),
          })
        expectNotExecutedAnswer(retry, say('retryOf', { i, path }))
      }
    }
    const after = await ctx.bank.ledger()
    const rows = newRows(before, after)
    expectEqual(
      rows.map((r) => ({ kind: r.kind, from: r.from, to: r.to, amount: r.amount })),
      [
        { kind: 'transfer', ...transfer },
        { kind: 'deposit', from: null, ...deposit },
      ],
      say('oneRowEach', { attempts }),
    )
    const balance = (l: Ledger, id: string) => l.accounts.find((x) => x.id === id)!.balance
    const moved = new Map<string, number>()
    const add = (id: string, n: number) => moved.set(id, (moved.get(id) ?? 0) + n)
    add(transfer.from, -transfer.amount)
    add(transfer.to, transfer.amount)
    add(deposit.to, deposit.amount)
    for (const [id, delta] of moved) expectEqual(balance(after, id), balance(before, id) + delta, say('balanceAfterRetries', { account: id }))
    expectConsistent(after)
    ctx.note(say('retriesNote', { attempts, amount: `₩${transfer.amount.toLocaleString('en')}` }))
  },
}

const simultaneousRetries: Check = {
  id: 'simultaneous-retries',
  title: 'Eight or more simultaneous copies of one request execute once',
  points: 6,
  hint: 'Copies that all pass the claim usually come from a SELECT-then-INSERT with an await between them, an INSERT OR IGNORE whose result is not checked, or a key recorded only after executing. Let the INSERT itself decide: the PRIMARY KEY lets exactly one succeed.',
  timeoutMs: 30_000,
  async run(ctx) {
    // Its own instance, with a processing delay (LAB_PROCESSING_DELAY_MS, in
    // config, which a layer may read too): any await between checking for the
    // key and recording it becomes a window this long.
    const bank = await ctx.startServer({ settings: { processingDelayMs: RACE_WINDOW_MS } })
    const [a, b] = await openParties(ctx, 2, 2, bank)
    const body = transferPlan(ctx, a, b)
    const n = ctx.rng.int(8, 12)
    const spec = bank.postSpec(a.customer, '/transfers', body, { key: ctx.rng.uuid() })
    const before = await bank.ledger()
    const burst = await heldBurst([{ bank, specs: Array.from({ length: n }, () => spec) }])
    const { reachedCore } = burst
    await expectOneExecution(bank, before, body, burst)
    ctx.note(say('simultaneousNote', { n, past: reachedCore, away: n - reachedCore }))
  },
}

const twoInstances: Check = {
  id: 'two-instances-one-database',
  title: 'Simultaneous copies split over two server processes sharing the database execute once',
  points: 6,
  hint: 'Two processes share only the database file, so that is where the decision must be: a lock in memory (a Map, a Set) exists once per process, and a SELECT-then-INSERT across an await or an unchecked INSERT OR IGNORE lets copies through anywhere. The PRIMARY KEY decides for every process.',
  timeoutMs: 30_000,
  async run(ctx) {
    const other = await ctx.startServer({ sameDatabase: true })
    const [a, b] = await openParties(ctx, 2)
    const body = transferPlan(ctx, a, b)
    const n = ctx.rng.int(8, 12)
    const first = ctx.rng.int(2, n - 2)
    const key = ctx.rng.uuid()
    const specs = (bank: BankClient, count: number) => Array.from({ length: count }, () => bank.postSpec(a.customer, '/transfers', body, { key }))
    const before = await ctx.bank.ledger()
    const burst = await heldBurst([
      { bank: ctx.bank, specs: specs(ctx.bank, first) },
      { bank: other, specs: specs(other, n - first) },
    ])
    await expectOneExecution(ctx.bank, before, body, burst, [
      { name: say('process', { n: 1 }), copies: first },
      { name: say('process', { n: 2 }), copies: n - first },
    ])
    ctx.note(say('twoProcessesNote', { n, first, second: n - first }))
  },
}

const distinctKeys: Check = {
  id: 'distinct-keys-distinct-transfers',
  title: 'Identical bodies with different keys are different transfers, and all execute',
  points: 4,
  hint: 'The key, not the body, names the intent: paying the same amount twice on purpose is two keys and two transfers.',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const m = ctx.rng.int(3, 6)
    // Small enough that m of them fit in the smallest opening balance (SMALLEST_OPENING, setup.ts).
    const body = transferPlan(ctx, a, b, 15_000)
    const before = await ctx.bank.ledger()
    const replies = await ctx.bank.burst(Array.from({ length: m }, () => ctx.bank.postSpec(a.customer, '/transfers', body, { key: ctx.rng.uuid() })))
    for (const r of replies) expectStatus(r, 201, say('newKeyNewTransfer'))
    const rows = newRows(before, await ctx.bank.ledger()).filter((e) => e.from === body.from && e.to === body.to)
    expectEqual(rows.length, m, say('differentKeysRows', { m }))
  },
}

const keyTableUnique: Check = {
  id: 'key-table-unique',
  title: 'The key table has a PRIMARY KEY or UNIQUE constraint over the key',
  points: 4,
  hint: 'Declare the key column PRIMARY KEY (or UNIQUE) in CREATE TABLE, and store the key exactly as the client sent it.',
  timeoutMs: 10_000,
  needs: 'sqlite-file',
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const keys: [string, string] = [ctx.rng.uuid(), ctx.rng.uuid()]
    // Amounts from ranges that do not overlap, so the two bodies always differ and an index that also
    // covers the body is seen for what it is. Two of at most ₩45,000 fit in the smallest opening
    // balance, even from one account.
    const bodies = [transferPlan(ctx, a, b, 22_000), transferPlan(ctx, a, b, 45_000, 22_100)]
    for (const [i, key] of keys.entries()) {
      // Two requests a second apart on the grade's clock (which otherwise stands still): a column
      // stamped with the time differs between them, so an index that covers it is seen for what it is.
      if (i > 0) await ctx.clock.advance(1_000)
      const reply = await ctx.bank.transfer(a.customer, bodies[i]!, { key })
      expectStatus(reply, 201, say('newKeyExecutes'))
    }
    const verdict = inspectKeyTable(ctx.dbPath, keys)
    if (!verdict.ok) fail(say('notUnique', { reason: verdict.reason }))
    ctx.note(say('keysLive', { table: verdict.table, column: verdict.column, index: verdict.index, columns: verdict.columns.join(', ') }))
  },
}

const keyRequired: Check = {
  id: 'key-required',
  title: 'A money-moving POST without an Idempotency-Key gets 400 and moves nothing',
  points: 3,
  hint: 'Read op.idempotencyKey first; when it is undefined, answer missingKey() (a 400 problem) before anything else.',
  timeoutMs: 10_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const before = await ctx.bank.ledger()
    expectProblem(await ctx.bank.transfer(a.customer, transferPlan(ctx, a, b)), 400, say('withoutKey', { path: '/transfers' }))
    const deposit = { to: ctx.rng.pick(a.accounts), amount: ctx.rng.amount() }
    expectProblem(await ctx.bank.deposit(a.customer, deposit), 400, say('withoutKey', { path: '/deposits' }))
    const after = await ctx.bank.ledger()
    expectEqual(newRows(before, after).length, 0, say('noKeyNoMoney'))
  },
}

const keyFormat: Check = {
  id: 'key-format',
  title: 'Empty keys, keys with a tab or a non-ASCII character, and quoted keys RFC 8941 refuses get 400; space and ~ are fine',
  points: 2,
  hint: 'A value that starts with " must parse as an RFC 8941 String with no parameters; after unquoting, a key is 1 to 255 printable ASCII characters (space to ~). Check both before claiming it.',
  timeoutMs: 10_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const malformed: Array<[Phrase, string]> = [
      [say('emptyKey'), ''],
      [say('emptyQuotedKey'), '""'],
      [say('tabKey'), inside(ctx, printableKey(ctx, ctx.rng.int(8, 40)), '\t')],
      [say('nonAsciiKey'), inside(ctx, printableKey(ctx, ctx.rng.int(8, 40)), ctx.rng.pick(['é', 'ü', 'ñ', 'ß', '¿']))],
    ]
    const before = await ctx.bank.ledger()
    for (const [what, key] of ctx.rng.shuffle(malformed))
      expectProblem(await ctx.bank.transfer(a.customer, transferPlan(ctx, a, b), { key }), 400, courseRule('keyFormat', say('isMalformed', { what })))
    // A value that starts with " is an RFC 8941 String, or nothing: the draft's own form, so refusing these is no course rule.
    for (const { write, what } of ctx.rng.shuffle(Object.values(KEY_MALFORMATIONS)))
      expectProblem(
        await ctx.bank.transfer(a.customer, transferPlan(ctx, a, b), { key: write(printableKey(ctx, ctx.rng.int(8, 40))) }),
        400,
        say('quotedMalformed', { what }),
      )
    expectEqual(newRows(before, await ctx.bank.ledger()).length, 0, say('malformedNoMoney'))
    // The two ends of the printable range, inside the key (a header value's own ends are trimmed by HTTP), in a key of any valid length.
    const edges = inside(ctx, inside(ctx, printableKey(ctx, ctx.rng.int(2, 253)), ' '), '~')
    const reply = await ctx.bank.transfer(a.customer, transferPlan(ctx, a, b, 30_000), { key: edges })
    expectStatus(reply, 201, courseRule('keyFormat', say('edgesValid', { length: edges.length })))
    // The shortest key there is: the empty one above is refused, one character is not.
    const shortest = await ctx.bank.transfer(a.customer, transferPlan(ctx, a, b, 30_000), { key: printableKey(ctx, 1) })
    expectStatus(shortest, 201, courseRule('keyFormat', say('oneCharValid')))
  },
}

const keyLengthLimit: Check = {
  id: 'key-length-limit',
  title: 'A key of exactly 255 characters is valid bare, quoted and quoted with escapes; 256 is refused in both forms',
  points: 3,
  hint: 'Count the characters of the key itself: after unquoting and unescaping a quoted value, never the header as written. 255 is allowed, 256 is not.',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const refused: Array<[Phrase, string]> = [
      [say('bare256'), printableKey(ctx, 256)],
      [say('quoted256'), quoted(printableKey(ctx, 256))],
      [say('escaped256'), quoted(keyNeedingEscapes(ctx, 256))],
    ]
    const before = await ctx.bank.ledger()
    for (const [what, key] of ctx.rng.shuffle(refused))
      expectProblem(await ctx.bank.transfer(a.customer, transferPlan(ctx, a, b), { key }), 400, courseRule('keyFormat', say('oneTooLong', { what })))
    expectEqual(newRows(before, await ctx.bank.ledger()).length, 0, say('overlongNoMoney'))
    const escaped = keyNeedingEscapes(ctx, 255)
    const accepted: Array<[Phrase, string]> = [
      [say('bare255'), printableKey(ctx, 255)],
      [say('quoted255'), quoted(printableKey(ctx, 255))],
      [say('escaped255', { escaped: quoted(escaped).length - 257, written: quoted(escaped).length }), quoted(escaped)],
    ]
    for (const [what, key] of ctx.rng.shuffle(accepted)) {
      // Small amounts: three of them fit in the smallest opening balance, even from one account.
      const reply = await ctx.bank.transfer(a.customer, transferPlan(ctx, a, b, 30_000), { key })
      expectStatus(reply, 201, courseRule('keyFormat', say('validCountsKey', { what })))
    }
    ctx.note(say('lengthNote'))
  },
}

const keyCaseSensitive: Check = {
  id: 'key-case-sensitive',
  title: 'Keys that differ only in letter case are different keys: both execute',
  points: 3,
  hint: 'Store and compare the key exactly as the client sent it: no lowercasing, no trimming. Header names are case-insensitive; header values are not.',
  timeoutMs: 10_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const key = `Key-${printableKey(ctx, ctx.rng.int(16, 40))}`
    const swapped = [...key].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')
    // The same body under both: only the key can tell the two apart.
    const body = transferPlan(ctx, a, b, 45_000)
    const before = await ctx.bank.ledger()
    for (const k of ctx.rng.shuffle([key, swapped])) {
      const reply = await ctx.bank.transfer(a.customer, body, { key: k })
      const rows = newRows(before, await ctx.bank.ledger()).length
      if (reply.status !== 201)
        fail(say('caseTaken', { key: k }), {
          exchange: reply.exchange,
          expected: say('newKey201'),
          got: say('caseGot', { status: reply.status, rows }),
        })
    }
    expectEqual(newRows(before, await ctx.bank.ledger()).length, 2, say('caseTwoTransfers'))
  },
}

const quotedKey: Check = {
  id: 'quoted-key-same-as-bare',
  title: 'The quoted form "abc" and the bare form abc are the same key',
  points: 3,
  hint: 'The draft sends the key as a Structured Field String ("…", RFC 8941); parse a quoted value (structured-headers parseItem) and use the string inside.',
  timeoutMs: 10_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const body = transferPlan(ctx, a, b)
    // A " and a \ inside: the quoted form escapes both, so only a real sf-string parse gives the bare key back.
    const key = inside(ctx, inside(ctx, ctx.rng.uuid(), '"'), '\\')
    const [firstForm, secondForm] = ctx.rng.shuffle([quoted(key), key])
    const before = await ctx.bank.ledger()
    const first = await ctx.bank.transfer(a.customer, body, { key: firstForm })
    expectStatus(first, 201, say('firstFormExecutes', { form: firstForm }))
    const second = await ctx.bank.transfer(a.customer, body, { key: secondForm })
    const rows = newRows(before, await ctx.bank.ledger())
    if (rows.length !== 1)
      fail(courseRule('quotedEqualsBare', say('formsExecuted', { first: firstForm, second: secondForm, rows: rows.length })), {
        exchange: second.exchange,
        expected: say('sameKeyBothForms'),
        got: say('rows', { rows: rows.length }),
      })
    expectNotExecutedAnswer(second, say('secondIsRetry', { first: firstForm, second: secondForm }))
  },
}

export const stage1: Check[] = [
  retriesExecuteOnce,
  simultaneousRetries,
  twoInstances,
  distinctKeys,
  keyTableUnique,
  keyRequired,
  keyFormat,
  keyLengthLimit,
  keyCaseSensitive,
  quotedKey,
]
