// Stage 2 (fingerprint): the reference solution passes the whole cumulative
// grade, the starter fails this stage's checks, and every stage 2 mutant fails
// the check aimed at it on every seed. Also: the grader's own expectations are
// sound. The RFC 8785 cases it copied agree with an independent implementation
// (the `canonicalize` package), and every re-serialization it sends parses back
// to the same value while differing from the first text.
import jcs from 'canonicalize'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { PLAIN, respell, serialize, type Style } from '#grader/checks/jsonVariants.ts'
import { APPENDIX_B, canonicalizeCases, double } from '#grader/checks/rfc8785.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { stage2Mutants } from '#grader/mutants/stage2.ts'
import { Rng } from '#harness/rng.ts'
import { grade } from '#grader/grade.ts'
import { stageSuite } from './helpers/stageSuite.ts'

const SEEDS = [3, 2_718, 16_180] as const

stageSuite(2, {
  mutants: stage2Mutants,
  // The starter is stage 1's layer: a re-serialized retry is a duplicate there too.
  starterPasses: ['reserialized-retry'],
})

describe("the grader's RFC 8785 expectations", () => {
  it('Appendix B, as copied, is what ECMAScript (and so JCS) writes for each double', () => {
    for (const [hex, expected] of APPENDIX_B) expect(jcs(double(hex)), hex).toBe(expected)
  })

  it.for(SEEDS)('every case agrees with the canonicalize package (seed %i); lone surrogates throw there too', (seed) => {
    for (const c of canonicalizeCases(new Rng(seed))) {
      let oracle: string | null
      try {
        oracle = jcs(JSON.parse(c.input)) ?? null
      } catch {
        oracle = null
      }
      expect(oracle, `${c.what}: ${c.input}`).toBe(c.expected)
    }
  })
})

describe('re-serializations', () => {
  const body = {
    from: 'acc_1',
    to: 'acc_2',
    amount: 123_400,
    memo: 'Café 송금 😀 "q" \\ /',
    metadata: { priority: 1, rate: 12.5, invoice: { number: 'INV-1', issuer: { name: 'é', city: 'Seoul' }, lines: [{ sku: 'A', qty: 2, price: 4500 }] } },
  }
  const styles: Style[] = (['original', 'shuffled', 'nested-shuffled'] as const).flatMap((order) =>
    [0, 1, 2, 3, 4, 5, 6, 7].map((bits) => ({ order, whitespace: !!(bits & 1), respellNumbers: !!(bits & 2), escapeStrings: !!(bits & 4) })),
  )

  it.for(SEEDS)('parse back to the same value, and differ from the plain text whenever the style changes something (seed %i)', (seed) => {
    const rng = new Rng(seed)
    const plain = serialize(body, PLAIN, rng)
    expect(plain).toBe(JSON.stringify(body))
    for (const style of styles) {
      const text = serialize(body, style, rng)
      expect(jcs(JSON.parse(text)), text).toBe(jcs(body))
      if (JSON.stringify(style) !== JSON.stringify(PLAIN)) expect(text, JSON.stringify(style)).not.toBe(plain)
    }
  })

  it.for(SEEDS)('respell() writes the same double another way (seed %i)', (seed) => {
    const rng = new Rng(seed)
    for (let i = 0; i < 500; i++) {
      const n = (rng.chance(0.5) ? -1 : 1) * rng.int(1, 1e9) * 10 ** rng.int(-40, 40)
      const text = respell(n, rng)
      expect(JSON.parse(text), text).toBe(n)
      expect(text).not.toBe(JSON.stringify(n))
    }
  })
})

describe('partial credit for canonicalize()', () => {
  it('a canonicalize() wrong only on lone surrogates earns the points of the four groups it gets right', async () => {
    const path = materialize(stage2Mutants.find((m) => m.id === 'lone-surrogates-accepted')!)
    const r = await grade({ stage: 2, seed: SEEDS[0], source: { kind: 'dir', path }, only: ['canonicalize-rfc8785'] })
    const [result] = r.checks
    const points = checksFor(2).find((c) => c.id === 'canonicalize-rfc8785')!.points
    expect(result).toMatchObject({ passed: false, status: 'fail', maxPoints: points, points: Math.floor((points * 4) / 5) })
    expect(result!.message).toMatch(/rejected input 0\/5/)
    expect(result!.message).toMatch(/key order (\d+)\/\1, strings (\d+)\/\2, numbers (\d+)\/\3/)
  })
})
