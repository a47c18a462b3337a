// Stage 2: a key stands for one payload. The same key with a different body is
// refused with 422 and moves nothing; the same body written differently (key
// order, whitespace, number spelling, escapes) is still the same request. And
// the learner's canonicalize() is held to RFC 8785 directly.
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import { resolve } from 'node:path'
import type { BankClient, Customer, Ledger, TransferBody } from '#harness/bankClient.ts'
import { expectEqual, expectProblem, expectStatus, fail, type Check, type CheckContext } from '../engine/check.ts'
import { expectChangedBodyRefused, expectConsistent, newRows, openParties, type Party } from './setup.ts'
import { PLAIN, serialize, type Style } from './jsonVariants.ts'
import { canonicalizeCases, GROUPS, groupName } from './rfc8785.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": stage2.<key>).
const say = phrases('stage2', {
  underUsedKey: '{what}, under a key already used for another body',
  expected422: 'HTTP 422: another body under a used key',
  gotRetry: 'HTTP {status}: a retry of the first transfer',
  refusedNoMoney: '{what}: a refused request moves no money',
  balancesUnchanged: '{what}: balances unchanged by the refusal',
  firstExecutes: 'the first transfer with a new key executes',
  amendedTo: '{amount} amended to {amended}',
  sentTwice: '{what}, sent a second time',
  stillDuplicate: 'after the 422, a retry of the original body is still a plain duplicate',
  oneOfOriginal: 'exactly one transfer, of the original amount',
  amendedNote: '{amount} sent, amended to {amended} under the same key → 422, nothing moved',
  anotherRecipient: 'another recipient',
  anotherMemo: 'another memo',
  anotherQuantity: 'another quantity deep inside metadata',
  linesReordered: 'the invoice lines in another order',
  arrayOrderReplayed:
    "the same invoice lines in another order are another body, but it was replayed as the same body: RFC 8785 sorts an object's keys, never an array's members, whose order is part of the value.",
  typesReplayed:
    '{what} is another body, but it was replayed as the same body: values of different JSON types differ, however loosely equal (false is not 0, true is not 1, 5 is not "5", null is not false). Canonicalize each value by its JSON type; never coerce one into another.',
  emptyExecutes: 'a transfer with an empty memo and empty metadata, under a new key, executes',
  memoLeftOut: 'the empty memo left out',
  metadataLeftOut: 'the empty metadata left out',
  absentReplayed:
    '{what} is another body, but it was replayed as the same body: a field left out is not a field sent empty. Fingerprint the body as it was parsed, without filling in defaults.',
  coversNote:
    'another recipient, another memo, another quantity in metadata, the invoice lines in another order, and {retyped} under the same key; an empty memo, then empty metadata, left out under another → refused each, nothing moved',
  reorderedAll: 'keys reordered at every level',
  reorderedNested: 'keys reordered inside nested objects only',
  whitespace: 'whitespace added between tokens',
  numbersRespelled: 'numbers respelled (1 as 1.0 or 1e0, 4500 as 4.5e3…) in amount and metadata',
  escaped: 'characters escaped ("\\u00e9" for "é")',
  allAtOnce: 'all of these at once',
  refusedAsDifferent: 'the same payload with {what} was refused as a different request: the fingerprint must not see how the JSON was written',
  retryOfFirst: 'HTTP 2xx: a retry of the first request',
  isRetry: 'the same payload with {what} is a retry',
  executedAgain: 'the same payload with {what} executed again',
  oneRow: '1 ledger row',
  rows: '{rows} ledger rows',
  reserializedNote: 'one transfer, then {count} re-serialized retries of it under the same key → 1 ledger row, no 422',
  returned: 'returned {value}',
  threw: 'threw: {error}',
  groupScore: '{group} {right}/{total}',
  canonWrong:
    '{wrong} of {total} inputs canonicalized wrongly ({perGroup}; points for each group entirely right). Wrong: {examples}.\nFirst: {first}\ninput:    {input}',
  notIJson: 'an error (not I-JSON)',
  canonNote: '{count} inputs (RFC 8785 examples, Appendix B numbers, lone surrogates, random values) canonicalized as the RFC says',
})

// Each has an é (sent once raw, once as \u00e9), Hangul, and other non-ASCII characters.
const MEMOS = ['월세 café', 'Crème brûlée 송금', 'déjà vu 점심값', 'Noël 선물 🎁 été', 'naïve 환불 / refund résumé']

/** A transfer body with text and nested objects: what canonicalization must get right. */
function richBody(ctx: CheckContext, a: Party, b: Party): TransferBody {
  const rng = ctx.rng
  return {
    from: a.accounts[0]!,
    to: rng.pick(b.accounts),
    amount: rng.amount(10_000, 90_000),
    memo: rng.pick(MEMOS),
    metadata: {
      channel: rng.pick(['teller', 'mobile', 'web']),
      priority: 1,
      rate: rng.int(1, 999) / 8,
      invoice: {
        number: `INV-${rng.int(1000, 9999)}`,
        issuer: { name: rng.pick(['Café 서울', 'Bäckerei 부산', 'Señor 대구']), city: rng.pick(['Seoul', 'Busan', 'Daegu']) },
        lines: [
          { sku: `A-${rng.int(1, 99)}`, qty: rng.int(1, 9), price: rng.int(1, 500) * 100 },
          { sku: `B-${rng.int(1, 99)}`, qty: 1, price: rng.int(1, 9_999) / 2 },
        ],
      },
    },
  }
}

/**
 * Metadata members whose values keep their loose value (JavaScript's ==, or a
 * coercion to number) but change JSON type: false → 0, true → 1, a number →
 * the same digits as a string (the integer priority and the fractional rate:
 * a coercion may take one and not the other), null → false. Every `before`
 * goes in the first body, each `after` in a changed body of its own.
 */
function retypings(metadata: Record<string, unknown>): Array<{ field: string; before: unknown; after: unknown }> {
  return [
    { field: 'approved', before: false, after: 0 },
    { field: 'urgent', before: true, after: 1 },
    { field: 'priority', before: metadata.priority, after: String(metadata.priority) },
    { field: 'rate', before: metadata.rate, after: String(metadata.rate) },
    { field: 'reviewed', before: null, after: false },
  ]
}

function balances(ledger: Ledger, ids: string[]): Record<string, number> {
  return Object.fromEntries(ids.map((id) => [id, ledger.accounts.find((x) => x.id === id)!.balance]))
}

/**
 * Sends `body` with `key` and insists that it is refused and moves nothing.
 * The 422 itself is amended-amount's property; a check given `note` only
 * notes another 4xx (see expectChangedBodyRefused). `replayed`, when given,
 * is the failure for a 2xx: the server took the body for the first one.
 */
async function expectRefused(
  bank: BankClient,
  customer: Customer,
  body: TransferBody,
  key: string,
  what: Line,
  note?: (line: Line) => void,
  replayed?: Phrase,
): Promise<void> {
  const before = await bank.ledger()
  const reply = await bank.transfer(customer, body, { key })
  const why = say('underUsedKey', { what })
  if (replayed && reply.status >= 200 && reply.status < 300)
    fail(replayed, {
      exchange: reply.exchange,
      expected: say('expected422'),
      got: say('gotRetry', { status: reply.status }),
    })
  if (note) expectChangedBodyRefused(reply, why, note)
  else expectProblem(reply, 422, why)
  const after = await bank.ledger()
  expectEqual(newRows(before, after).length, 0, say('refusedNoMoney', { what }), reply.exchange)
  const ids = [body.from, body.to]
  expectEqual(balances(after, ids), balances(before, ids), say('balancesUnchanged', { what }), reply.exchange)
}

const amendedAmount: Check = {
  id: 'amended-amount',
  title: 'The same key with an amended amount gets 422, and the balances do not move',
  points: 6,
  hint: 'Store a fingerprint of the body with the claim; when the key is taken, compare fingerprints: different means keyReused() (422).',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    // A branch account that can cover the original and the amended amount alike.
    const from = await ctx.bank.openAccount(a.customer, ctx.rng.int(100, 300) * 10_000)
    const key = ctx.rng.uuid()
    const body: TransferBody = { from, to: ctx.rng.pick(b.accounts), amount: ctx.rng.int(10, 40) * 10_000 }
    const before = await ctx.bank.ledger()
    expectStatus(await ctx.bank.transfer(a.customer, body, { key }), 201, say('firstExecutes'))
    // The teller corrects the amount on the same screen and submits again: same key.
    const amended = { ...body, amount: body.amount + ctx.rng.int(1, 20) * 10_000 }
    const what = say('amendedTo', { amount: `₩${body.amount.toLocaleString('en')}`, amended: `₩${amended.amount.toLocaleString('en')}` })
    await expectRefused(ctx.bank, a.customer, amended, key, what)
    // Sent again unchanged, the amendment is refused again: a 422 does not bind the key to the new body.
    await expectRefused(ctx.bank, a.customer, amended, key, say('sentTwice', { what }))
    // The key still stands for the original: its retry is a duplicate, not a refusal.
    const retry = await ctx.bank.transfer(a.customer, body, { key })
    if (retry.status < 200 || retry.status >= 300)
      fail(say('stillDuplicate'), {
        exchange: retry.exchange,
        expected: 'HTTP 2xx',
        got: `HTTP ${retry.status}`,
      })
    const after = await ctx.bank.ledger()
    const rows = newRows(before, after)
    expectEqual(
      rows.map((r) => r.amount),
      [body.amount],
      say('oneOfOriginal'),
    )
    expectConsistent(after)
    ctx.note(say('amendedNote', { amount: `₩${body.amount.toLocaleString('en')}`, amended: `₩${amended.amount.toLocaleString('en')}` }))
  },
}

const amendedBody: Check = {
  id: 'fingerprint-covers-body',
  title: 'Changing the recipient, the memo or a nested metadata value under a used key gets 422',
  points: 4,
  hint: 'Fingerprint the whole parsed body (op.payload), not only from/to/amount: any difference is a different request, a change of JSON type too (false is not 0, "5" is not 5).',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const key = ctx.rng.uuid()
    const rich = richBody(ctx, a, b)
    // Metadata values that a loose comparison (==, a coercion to number) takes for others of another
    // JSON type: each is changed alone, so every seed tries every one.
    const retyped = retypings(rich.metadata!).map((r) => ({ ...r, what: `metadata.${r.field}: ${JSON.stringify(r.before)} → ${JSON.stringify(r.after)}` }))
    const body: TransferBody = { ...rich, metadata: { ...rich.metadata, ...Object.fromEntries(retyped.map((r) => [r.field, r.before])) } }
    expectStatus(await ctx.bank.transfer(a.customer, body, { key }), 201, say('firstExecutes'))
    const invoice = body.metadata!.invoice as { lines: Array<{ qty: number }> }
    const changes: Array<[Line, TransferBody, Phrase?]> = [
      [say('anotherRecipient'), { ...body, to: b.accounts.find((x) => x !== body.to)! }],
      [say('anotherMemo'), { ...body, memo: `${body.memo} (2)` }],
      [
        say('anotherQuantity'),
        {
          ...body,
          metadata: { ...body.metadata, invoice: { ...invoice, lines: [{ ...invoice.lines[0]!, qty: invoice.lines[0]!.qty + 1 }, invoice.lines[1]] } },
        },
      ],
      [
        say('linesReordered'),
        { ...body, metadata: { ...body.metadata, invoice: { ...invoice, lines: [invoice.lines[1], invoice.lines[0]] } } },
        say('arrayOrderReplayed'),
      ],
      ...retyped.map(({ field, after, what }): [Line, TransferBody, Phrase] => [
        what,
        { ...body, metadata: { ...body.metadata, [field]: after } },
        say('typesReplayed', { what }),
      ]),
    ]
    for (const [what, changed, replayed] of ctx.rng.shuffle(changes)) await expectRefused(ctx.bank, a!.customer, changed, key, what, ctx.note, replayed)
    // Absent is not empty: under a second key, a body with an empty memo and empty metadata, then the same with each left out.
    const emptyKey = ctx.rng.uuid()
    const empty: TransferBody = { from: a.accounts[1]!, to: body.to, amount: ctx.rng.amount(1_000, 9_000), memo: '', metadata: {} }
    expectStatus(await ctx.bank.transfer(a.customer, empty, { key: emptyKey }), 201, say('emptyExecutes'))
    const { memo: _memo, ...memoLeftOut } = empty
    const { metadata: _metadata, ...metadataLeftOut } = empty
    const leftOut: Array<[Phrase, TransferBody]> = [
      [say('memoLeftOut'), memoLeftOut],
      [say('metadataLeftOut'), metadataLeftOut],
    ]
    for (const [what, changed] of ctx.rng.shuffle(leftOut))
      await expectRefused(ctx.bank, a.customer, changed, emptyKey, what, ctx.note, say('absentReplayed', { what }))
    ctx.note(say('coversNote', { retyped: retyped.map((r) => r.what).join(', ') }))
  },
}

/** Each retry text and what makes it differ from the first request's text. */
const REWRITES: Array<[Phrase, Partial<Style>]> = [
  [say('reorderedAll'), { order: 'shuffled' }],
  [say('reorderedNested'), { order: 'nested-shuffled' }],
  [say('whitespace'), { whitespace: true }],
  [say('numbersRespelled'), { respellNumbers: true }],
  [say('escaped'), { escapeStrings: true }],
  [say('allAtOnce'), { order: 'shuffled', whitespace: true, respellNumbers: true, escapeStrings: true }],
]

const reserializedRetry: Check = {
  id: 'reserialized-retry',
  title: 'The same payload serialized differently is a retry, not a 422, and does not execute again',
  points: 6,
  hint: 'Fingerprint the parsed body in its canonical form (RFC 8785), never the raw text: sort keys at every depth.',
  timeoutMs: 15_000,
  async run(ctx) {
    const [a, b] = await openParties(ctx, 2)
    const key = ctx.rng.uuid()
    const body = richBody(ctx, a, b)
    const before = await ctx.bank.ledger()
    const original = serialize(body, PLAIN, ctx.rng)
    expectStatus(await ctx.bank.transfer(a.customer, body, { key, raw: original }), 201, say('firstExecutes'))
    for (const [what, style] of ctx.rng.shuffle(REWRITES)) {
      const raw = serialize(body, { ...PLAIN, ...style }, ctx.rng)
      const reply = await ctx.bank.transfer(a.customer, body, { key, raw })
      if (reply.status === 422)
        fail(say('refusedAsDifferent', { what }), {
          exchange: reply.exchange,
          expected: say('retryOfFirst'),
          got: 'HTTP 422',
        })
      if (reply.status < 200 || reply.status >= 300)
        fail(say('isRetry', { what }), { exchange: reply.exchange, expected: 'HTTP 2xx', got: `HTTP ${reply.status}` })
      const rows = newRows(before, await ctx.bank.ledger())
      if (rows.length !== 1)
        fail(say('executedAgain', { what }), { exchange: reply.exchange, expected: say('oneRow'), got: say('rows', { rows: rows.length }) })
    }
    ctx.note(say('reserializedNote', { count: REWRITES.length }))
  },
}

/** Canonical text as it is, except characters a terminal would hide or break on, shown as ⟨U+XXXX⟩. */
const visible = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this makes visible
  text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udfff]/gu, (ch) => `⟨U+${ch.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`)

const canonicalizeRfc8785: Check = {
  id: 'canonicalize-rfc8785',
  title: 'canonicalize() follows RFC 8785: sorted keys, one number and string form, lone surrogates rejected',
  points: 8,
  hint: 'Sort keys with the default sort (UTF-16 code units) at every depth; JSON.stringify already writes JCS numbers and strings; throw on a string that is not well formed.',
  timeoutMs: 15_000,
  needs: 'learner-code',
  async run(ctx) {
    const file = resolve(ctx.stageDir(2), 'canonicalize.ts')
    const cases = canonicalizeCases(ctx.rng)
    const results = await ctx.callExport(file, {
      kind: 'call',
      name: 'canonicalize',
      inputs: cases.map((c) => c.input),
    })
    const wrong = cases.flatMap((c, i) => {
      const r = results[i]!
      if (c.expected === null) return r.ok ? [{ c, got: say('returned', { value: JSON.stringify(r.value) }) }] : []
      if (!r.ok) return [{ c, got: say('threw', { error: String(r.error) }) }]
      return r.value === c.expected ? [] : [{ c, got: typeof r.value === 'string' ? visible(r.value) : say('returned', { value: JSON.stringify(r.value) }) }]
    })
    // Partial credit by group: each group right earns its share of the points.
    const groups = GROUPS.map((group) => {
      const total = cases.filter((c) => c.group === group).length
      return { group, total, right: total - wrong.filter((w) => w.c.group === group).length }
    })
    const perGroup = listOf(groups.map((g) => say('groupScore', { group: groupName(g.group), right: g.right, total: g.total })))
    ctx.award((canonicalizeRfc8785.points * groups.filter((g) => g.right === g.total).length) / groups.length)
    if (wrong.length) {
      const [{ c, got }] = wrong as [(typeof wrong)[0]]
      const shown = wrong.slice(0, 4).map((w) => w.c.what)
      const examples = listOf(wrong.length > 4 ? [...shown, '…'] : shown, 'semicolon')
      fail(say('canonWrong', { wrong: wrong.length, total: cases.length, perGroup, examples, first: c.what, input: c.input.replace(/\s*\n\s*/g, ' ') }), {
        expected: c.expected === null ? say('notIJson') : visible(c.expected),
        got,
      })
    }
    ctx.note(say('canonNote', { count: cases.length }))
  },
}

export const stage2: Check[] = [amendedAmount, amendedBody, reserializedRetry, canonicalizeRfc8785]
