// The bank's reader of what JSON.parse hides (bank/strictJson.ts): depth,
// duplicate names, lone surrogates, number literals as written. Hand-picked
// cases, then properties over random JSON (fast-check, fixed seed).
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isExactInteger, scanJson } from '#bank/strictJson.ts'

const SEED = 20_261_201
const issues = (text: string) => {
  const scan = scanJson(text, 64)
  if (scan.tooDeep) throw new Error('unexpectedly too deep')
  return scan.issues
}

/** Nesting depth of a parsed value, the way the scanner counts it (the top-level container is 1). */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0
  return 1 + Math.max(0, ...Object.values(value as object).map(depthOf))
}

/** Every string of a value, member names included. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  if (value === null || typeof value !== 'object') return []
  if (Array.isArray(value)) return value.flatMap(stringsOf)
  return Object.entries(value).flatMap(([k, v]) => [k, ...stringsOf(v)])
}

describe('scanJson, by hand', () => {
  it('counts depth as enclosing arrays and objects, and stops past the limit', () => {
    expect(scanJson('1', 0)).toMatchObject({ tooDeep: false })
    expect(scanJson('[]', 0)).toEqual({ tooDeep: true })
    expect(scanJson('{"a":[[1]]}', 3)).toMatchObject({ tooDeep: false })
    expect(scanJson('{"a":[[1]]}', 2)).toEqual({ tooDeep: true })
    expect(scanJson('[[],[],[]]', 2)).toMatchObject({ tooDeep: false })
    expect(scanJson(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`, 32)).toEqual({ tooDeep: true })
  })

  it('finds duplicate names after unescaping, at any depth, with a zod-style path', () => {
    expect(issues('{"a":1,"a":2}')).toEqual([{ path: 'a', message: expect.stringMatching(/twice/) }])
    expect(issues('{"amount":1,"\\u0061mount":2}')).toEqual([{ path: 'amount', message: expect.stringMatching(/twice/) }])
    expect(issues('{"m":{"x":[0,{"b":1,"c":{},"b":[]}]}}')).toEqual([{ path: 'm.x.1.b', message: expect.stringMatching(/twice/) }])
    // The same name in two different objects is no duplicate.
    expect(issues('{"a":{"a":1},"b":[{"a":1},{"a":2}]}')).toEqual([])
  })

  it('finds lone surrogates in values and names, not in pairs or escaped quotes', () => {
    expect(issues('{"memo":"\\ud83d\\ude00 \\" \\\\ ok"}')).toEqual([])
    expect(issues('{"memo":"x\\ud800"}')).toEqual([{ path: 'memo', message: expect.stringMatching(/lone surrogate/) }])
    expect(issues('{"k\\udc00":1}')).toEqual([{ path: 'k\udc00', message: expect.stringMatching(/member name holds a lone surrogate/) }])
    expect(issues('["ok",["\\ude00\\ud83d"]]')).toEqual([{ path: '1.0', message: expect.stringMatching(/lone surrogate/) }])
    expect(issues('"\\ud800"')).toEqual([{ path: '', message: expect.stringMatching(/lone surrogate/) }])
  })

  it('reports the literals of top-level numbers as written, and only those', () => {
    const scan = scanJson('\ufeff { "amount" : 1.50e+3 , "n":{"amount":7}, "b":-0, "s":"1", "t":true, "z":null }', 32)
    expect(scan.tooDeep ? null : Object.fromEntries(scan.topLevelNumbers)).toEqual({ amount: '1.50e+3', b: '-0' })
  })

  it('lists at most 20 issues', () => {
    expect(issues(`{${Array.from({ length: 50 }, () => '"a":1').join(',')}}`)).toHaveLength(20)
  })
})

describe('isExactInteger', () => {
  it.for([
    ['250000', true],
    ['250000.0', true],
    ['2.5e5', true],
    ['2.5E+5', true],
    ['25000000e-2', true],
    ['0', true],
    ['-0.0', true],
    ['1e400', true],
    ['0.99999999999999999999', false],
    ['1.5', false],
    ['1e-1', false],
    ['5000.00000000000000001', false],
    ['25000001e-2', false],
    ['5e-400', false],
  ] as const)('%s → %s', ([literal, exact]) => {
    expect(isExactInteger(literal)).toBe(exact)
  })

  it('holds for whole numbers in every spelling, and fails for one stray digit below the point', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.nat(30), (n, k) => {
        expect(isExactInteger(`${n}${'0'.repeat(k)}e-${k}`)).toBe(true)
        expect(isExactInteger(`${n}.${'0'.repeat(k)}`.replace(/\.$/, ''))).toBe(true)
        expect(isExactInteger(`${n}.${'0'.repeat(k)}1`)).toBe(false)
        expect(isExactInteger(`${n}${'0'.repeat(k)}1e-${k + 1}`)).toBe(false)
      }),
      { seed: SEED, numRuns: 300 },
    )
  })
})

describe('scanJson, against JSON.parse on random JSON', () => {
  const value = fc.jsonValue({ maxDepth: 6 })

  it('any serialization of a JSON value: no issue, the same depth, the top-level numbers as written', () => {
    fc.assert(
      fc.property(value, fc.constantFrom(undefined, 1, '\t', '   '), (v, indent) => {
        const text = JSON.stringify(v, null, indent)
        const depth = depthOf(v)
        const scan = scanJson(text, depth)
        expect(scan.tooDeep).toBe(false)
        if (scan.tooDeep) return
        expect(scan.issues).toEqual([])
        if (v !== null && typeof v === 'object' && !Array.isArray(v))
          for (const [k, x] of Object.entries(v)) if (typeof x === 'number') expect(scan.topLevelNumbers.get(k)).toBe(JSON.stringify(x))
        if (depth > 0) expect(scanJson(text, depth - 1)).toEqual({ tooDeep: true })
      }),
      { seed: SEED, numRuns: 500 },
    )
  })

  it('a lone surrogate is found exactly when a string or name holds one', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }), (v) => {
        const found = issues(JSON.stringify(v)).some((i) => /lone surrogate/.test(i.message))
        expect(found).toBe(stringsOf(v).some((s) => !s.isWellFormed()))
      }),
      { seed: SEED, numRuns: 500 },
    )
  })

  it('a member repeated in any object is found, however its name is escaped', () => {
    const object = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 5 })
    fc.assert(
      fc.property(object, fc.jsonValue({ maxDepth: 2 }), fc.boolean(), (o, extra, escaped) => {
        const name = Object.keys(o)[0]!
        const spelled = escaped
          ? `"${name
              .split('')
              .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
              .join('')}"`
          : JSON.stringify(name)
        const text = `{"wrap":[${JSON.stringify(o).slice(0, -1)},${spelled}:${JSON.stringify(extra)}}]}`
        expect(issues(text)).toContainEqual({ path: `wrap.0.${name}`, message: expect.stringMatching(/twice/) })
      }),
      { seed: SEED, numRuns: 300 },
    )
  })
})
