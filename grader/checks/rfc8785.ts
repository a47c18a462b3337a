// The cases a learner's canonicalize() is held to. Expected outputs come from
// RFC 8785 itself (its examples and Appendix B, copied here with their
// section numbers) or from the `canonicalize` package, an independent
// implementation of the RFC; never from this course's solution. Lone
// surrogates are written by hand: RFC 8785 §3.2.2.2 requires I-JSON input
// (RFC 7493 §2.1), and a lone surrogate has no UTF-8 form, so it must throw.
import jcs from 'canonicalize'
import type { Rng } from '#harness/rng.ts'
import { respell } from './jsonVariants.ts'
import { type Line, phrases } from '#harness/i18n/phrase.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": rfc8785.<key>).
const say = phrases('rfc8785', {
  keyOrder: 'key order',
  strings: 'strings',
  numbers: 'numbers',
  rejectedInput: 'rejected input',
  wholeDocuments: 'whole documents',
  rfcExample: 'RFC 8785 §3.2.2 example',
  rfcSorting: 'RFC 8785 §3.2.3 sorting example',
  minusZero: 'minus zero',
  minusZeroInStructures: 'minus zero in structures',
  numberForms: 'number forms',
  integerLikeKeys: 'integer-like keys sort as strings',
  nestedObjects: 'nested objects sort too, inside arrays as well',
  upperBeforeLower: 'upper case before lower case',
  controlCharacters: 'control characters, quote and backslash are escaped; / and U+007F are not',
  asThemselves: 'U+2028, U+2029 and non-BMP characters are written as themselves',
  whitespace: 'whitespace around everything',
  emptyStructures: 'empty structures and strings',
  bareLiteral: 'a bare literal',
  bareString: 'a bare string',
  loneHigh: 'a lone high surrogate',
  loneLow: 'a lone low surrogate',
  wrongOrder: 'a surrogate pair in the wrong order',
  loneInKey: 'a lone surrogate in a key',
  loneDeep: 'a lone surrogate deep inside',
  mustThrow: '{what} (must throw)',
  appendixB: 'RFC 8785 Appendix B, the double {hex}',
  randomValue: 'random value {n}',
})

/**
 * What a case is about, for partial credit: a canonicalize() that sorts keys
 * right but writes numbers wrong has learned something, and the report says
 * which part is missing. Whole documents mix everything (the RFC's own
 * example, random values), so they are a group of their own.
 */
export const GROUPS = ['key order', 'strings', 'numbers', 'rejected input', 'whole documents'] as const
export type Group = (typeof GROUPS)[number]

/** A group's name as the report says it. */
export const groupName = (group: Group): Line =>
  say(
    ({ 'key order': 'keyOrder', strings: 'strings', numbers: 'numbers', 'rejected input': 'rejectedInput', 'whole documents': 'wholeDocuments' } as const)[
      group
    ],
  )

export type Case = {
  group: Group
  what: Line
  /** JSON text, parsed in the child process (so -0 and lone surrogates survive). */
  input: string
  /** The canonical text, or null when canonicalize must throw. */
  expected: string | null
}

/** RFC 8785 §3.2.2 (input) and §3.2.4 (its canonical form). */
const RFC_EXAMPLE: Case = {
  group: 'whole documents',
  what: say('rfcExample'),
  input: `{
    "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
    "string": "\\u20ac$\\u000F\\u000aA'\\u0042\\u0022\\u005c\\\\\\"\\/",
    "literals": [null, true, false]
  }`,
  expected: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA'B\\"\\\\\\\\\\"/"}`,
}

/** RFC 8785 §3.2.3: keys sort by UTF-16 code units (so 😀, D83D DE00, sorts before U+FB33). */
const RFC_SORTING: Case = {
  group: 'key order',
  what: say('rfcSorting'),
  input: `{
    "\\u20ac": "Euro Sign",
    "\\r": "Carriage Return",
    "\\ufb33": "Hebrew Letter Dalet With Dagesh",
    "1": "One",
    "\\ud83d\\ude00": "Emoji: Grinning Face",
    "\\u0080": "Control",
    "\\u00f6": "Latin Small Letter O With Diaeresis"
  }`,
  expected:
    '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
    '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
}

/** RFC 8785 Appendix B: IEEE 754 doubles (hex) and their JCS serialization. NaN and Infinity are not JSON input. */
export const APPENDIX_B: Array<[string, string]> = [
  ['0000000000000000', '0'],
  ['8000000000000000', '0'],
  ['0000000000000001', '5e-324'],
  ['8000000000000001', '-5e-324'],
  ['7fefffffffffffff', '1.7976931348623157e+308'],
  ['ffefffffffffffff', '-1.7976931348623157e+308'],
  ['4340000000000000', '9007199254740992'],
  ['c340000000000000', '-9007199254740992'],
  ['4430000000000000', '295147905179352830000'],
  ['44b52d02c7e14af5', '9.999999999999997e+22'],
  ['44b52d02c7e14af6', '1e+23'],
  ['44b52d02c7e14af7', '1.0000000000000001e+23'],
  ['444b1ae4d6e2ef4e', '999999999999999700000'],
  ['444b1ae4d6e2ef4f', '999999999999999900000'],
  ['444b1ae4d6e2ef50', '1e+21'],
  ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
  ['3eb0c6f7a0b5ed8d', '0.000001'],
  ['41b3de4355555553', '333333333.3333332'],
  ['41b3de4355555554', '333333333.33333325'],
  ['41b3de4355555555', '333333333.3333333'],
  ['41b3de4355555556', '333333333.3333334'],
  ['41b3de4355555557', '333333333.33333343'],
  ['becbf647612f3696', '-0.0000033333333333333333'],
  ['43143ff3c1cb0959', '1424953923781206.2'],
]

export const double = (hex: string) => Buffer.from(hex, 'hex').readDoubleBE(0)

/** Must throw: not I-JSON. */
const LONE_SURROGATES: Case[] = (
  [
    [say('loneHigh'), '"\\ud800"'],
    [say('loneLow'), '"abc\\udfff"'],
    [say('wrongOrder'), '"\\ude00\\ud83d"'],
    [say('loneInKey'), '{"k\\udc00": 1}'],
    [say('loneDeep'), '["ok", {"deep": ["x\\ud83d"]}]'],
  ] as const
).map(([what, input]) => ({ group: 'rejected input', what: say('mustThrow', { what }), input, expected: null }))

/** Edge cases whose expected form the oracle computes. */
const EDGES: Array<[Group, Line, string]> = [
  ['numbers', say('minusZero'), '-0'],
  ['numbers', say('minusZeroInStructures'), '{"a": -0.0, "b": [-0, 0e5, -0e-3]}'],
  ['numbers', say('numberForms'), '[1e21, 1E+20, 1e-7, 0.000001, 1e-6, 100e-2, 4.50, 123456789012345680000, 0.1, 1.5e300, -1.25e-5]'],
  ['key order', say('integerLikeKeys'), '{"10": 1, "9": 2, "1": 3, "b": 4, "a": 5, "": 6}'],
  ['key order', say('nestedObjects'), '{"z": {"b": 1, "a": {"d": 2, "c": 3}}, "a": [{"y": 1, "x": [{"q": 0, "p": 1}]}]}'],
  ['key order', say('upperBeforeLower'), '{"b": 1, "B": 2, "a": 3, "A": 4, "_": 5}'],
  ['strings', say('controlCharacters'), '"\\u0000\\u0008\\t\\n\\u000b\\f\\r\\u001f\\u007f \\"\\\\ \\/ \\u0080"'],
  ['strings', say('asThemselves'), '"\\u2028\\u2029 \\ud83d\\ude00 \\uD834\\uDD1E é"'],
  ['whole documents', say('whitespace'), '  {\n "b" : [ 1 , 2 ] ,\t"a" : true\r\n }  '],
  ['whole documents', say('emptyStructures'), '{"": "", "o": {}, "l": [], "n": null}'],
  ['whole documents', say('bareLiteral'), 'true'],
  ['strings', say('bareString'), '"\\u00e9t\\u00e9"'],
]

/** Random values: keys from a troublesome pool, numbers of every magnitude, mixed strings. */
function randomValue(rng: Rng, depth: number): string {
  const keyPool = ['a', 'B', 'aa', 'ab', '10', '9', '', 'é', '€', '\\ud83d\\ude00', '\\ufb33', '\\r', '\\u0080', 'z z']
  const charPool = ['a', 'Z', ' ', '\\"', '\\\\', '/', '\\n', '\\u0001', '\\u001f', 'é', '송', '€', '\\ud83d\\ude00', '\\u2028']
  const kind = depth > 2 ? rng.int(0, 3) : rng.int(0, 5)
  if (kind === 0) return rng.pick(['null', 'true', 'false'])
  if (kind === 1) {
    const digits = String(rng.int(1, 999_999_999)) + (rng.chance(0.5) ? String(rng.int(0, 99_999_999)) : '')
    const text = `${rng.chance(0.3) ? '-' : ''}${digits.slice(0, 1)}.${digits.slice(1) || '0'}e${rng.int(-30, 30)}`
    return rng.chance(0.5) ? text : respell(Number(text), rng)
  }
  if (kind === 2 || kind === 3) return `"${Array.from({ length: rng.int(0, 6) }, () => rng.pick(charPool)).join('')}"`
  if (kind === 4) return `[${Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth + 1)).join(', ')}]`
  const keys = rng.shuffle(keyPool).slice(0, rng.int(1, 6))
  return `{${keys.map((k) => `"${k}": ${randomValue(rng, depth + 1)}`).join(', ')}}`
}

const byOracle = (group: Group, what: Line, input: string): Case => ({ group, what, input, expected: jcs(JSON.parse(input)) ?? null })

export function canonicalizeCases(rng: Rng): Case[] {
  const numbers = APPENDIX_B.map(([hex, expected]): Case => {
    // Written another way than the expected form, so echoing the input is not enough.
    const input = respell(double(hex), rng)
    return { group: 'numbers', what: say('appendixB', { hex }), input, expected }
  })
  const random = Array.from({ length: 12 }, (_, i) => byOracle('whole documents', say('randomValue', { n: i + 1 }), randomValue(rng, 0)))
  // The most telling cases first: the first failure is the one the report shows.
  return [RFC_EXAMPLE, RFC_SORTING, ...EDGES.map(([g, w, i]) => byOracle(g, w, i)), ...LONE_SURROGATES, ...numbers, ...random]
}
