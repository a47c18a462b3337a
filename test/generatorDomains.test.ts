// The domain audit (docs/guarantees.md, "What the generators draw"), held as
// a test: each value class the contract names that the histories' generators
// claim to draw is drawn, in a sample as large as a few grades' histories. A
// generator narrowed back (a form, a field change, a spelling, a header, an
// edge amount or memo, a settings class no longer drawn) fails here.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  FIELD_CHANGES,
  historyArbitrary,
  KEY_MALFORMATIONS,
  LIBRARY_HEADERS,
  SPELLING_COUNT,
  type Alphabet,
  type History,
  type SendOp,
} from '#grader/model/history.ts'
import { drawnPeriods } from '#grader/model/settings.ts'
import { Rng } from '#harness/rng.ts'

const stage5: Alphabet = { instances: 1, clock: true, ttl: true, faultPoint: true, holdAlone: true }
/** About four grades' random histories: what one seed may miss, four do not. */
const histories: History[] = fc.sample(historyArbitrary(stage5, 14), { seed: 34, numRuns: 240 })
const sends = histories.flatMap((h) => h.ops.filter((op): op is SendOp => op.op === 'send'))
const intents = histories.flatMap((h) => h.intents)

describe('the histories draw every value class the contract names', () => {
  it('every key form: bare, quoted, upper-cased (another key), each malformed quoted form, and none', () => {
    const forms = new Set(sends.map((s) => s.form))
    // Written out, not read from history.ts: a class dropped there must fail here.
    expect([...forms].sort()).toEqual(['as-is', 'bad escape', 'parameter', 'unterminated', 'upper-case'])
    expect(Object.keys(KEY_MALFORMATIONS)).toHaveLength(3)
    expect(sends.some((s) => s.quoted && s.form === 'as-is')).toBe(true)
    expect(sends.some((s) => s.key === 'none')).toBe(true)
  })

  it('every body change: re-serialized, and each field change (a removed field and a reordered array included)', () => {
    const changes = new Set(sends.map((s) => s.change))
    const fields = ['amount', 'array-order', 'from', 'json-type', 'memo', 'metadata', 'removed', 'to']
    expect([...changes].sort()).toEqual([...fields, 'reserialized', 'same'].sort())
    expect([...FIELD_CHANGES].sort()).toEqual(fields)
  })

  it('every route spelling, and each library header alone in some request', () => {
    expect(SPELLING_COUNT).toBe(5)
    expect(new Set(sends.map((s) => s.spelling)).size).toBe(5)
    expect(Object.keys(LIBRARY_HEADERS)).toEqual(['User-Agent', 'X-Request-Id', 'X-Cache', 'X-Hit', 'Prefer', 'Idempotent-Replayed'])
    for (const header of Object.keys(LIBRARY_HEADERS))
      expect(
        sends.some((s) => s.extraHeaders.length === 1 && s.extraHeaders[0] === header),
        header,
      ).toBe(true)
  })

  it('amounts of 1 won and of no round number, and the memo and metadata edges', () => {
    const amounts = intents.map((i) => i.amount)
    expect(amounts).toContain(1)
    expect(amounts.some((a) => a % 100 !== 0)).toBe(true)
    const memos = new Set(intents.map((i) => i.memo))
    for (const memo of [undefined, '', 'x'.repeat(140), 'say "hi"\\\n', 'cafe\u0301']) expect(memos, JSON.stringify(memo)).toContain(memo)
    expect(intents.some((i) => i.metadata && Object.keys(i.metadata).length === 0)).toBe(true)
    expect(intents.some((i) => Array.isArray(i.metadata?.tags) && (i.metadata.tags as unknown[]).length > 1)).toBe(true)
  })

  it('requests held alone, let go and failing, with the takeovers that supersede them', () => {
    expect(sends.some((s) => s.holdAlone)).toBe(true)
    const letGos = histories.flatMap((h) => h.ops.filter((op) => op.op === 'let-go'))
    expect(new Set(letGos.map((op) => (op as { fails: boolean }).fails))).toEqual(new Set([true, false]))
  })
})

describe('the settings drawn per round of histories', () => {
  const rounds = Array.from({ length: 40 }, (_, seed) => drawnPeriods(new Rng(seed, 'settings'), 2, true, 86_400_000)).flat()

  it('leases under a second, of seconds and a fraction, and long: never a whole second', () => {
    expect(new Set(rounds.map((p) => p.classes.lease))).toEqual(new Set(['under a second', 'seconds and a fraction', 'long']))
    expect(rounds.every((p) => p.leaseMs % 1000 !== 0)).toBe(true)
    expect(rounds.filter((p) => p.classes.lease === 'under a second').every((p) => p.leaseMs < 1000)).toBe(true)
  })

  it('TTLs longer than the lease by seconds and a fraction, shorter than the lease, and days long', () => {
    expect(new Set(rounds.map((p) => p.classes.ttl))).toEqual(new Set(['the lease and seconds more', 'shorter than the lease', 'long']))
    for (const p of rounds) {
      if (p.classes.ttl === 'shorter than the lease') expect(p.ttlMs).toBeLessThan(p.leaseMs)
      if (p.classes.ttl === 'long') expect(p.ttlMs).toBeGreaterThan(86_400_000)
      expect(p.ttlMs).toBeGreaterThan(0)
    }
  })

  it("where there are two rounds, the first one's TTL is shorter than its lease; one round draws all three classes", () => {
    for (let seed = 0; seed < 40; seed++) expect(drawnPeriods(new Rng(seed, 'settings'), 2, true, 86_400_000)[0]!.classes.ttl).toBe('shorter than the lease')
    const single = Array.from({ length: 40 }, (_, seed) => drawnPeriods(new Rng(seed, 'settings'), 1, true, 86_400_000)[0]!.classes.ttl)
    expect(new Set(single)).toEqual(new Set(['the lease and seconds more', 'shorter than the lease', 'long']))
  })

  it('the first round of every grade has a lease under a second', () => {
    for (let seed = 0; seed < 40; seed++) expect(drawnPeriods(new Rng(seed, 'settings'), 1, false, 86_400_000)[0]!.classes.lease).toBe('under a second')
  })
})
