// Writes one JSON value as different texts, the way different client libraries
// (or one library on a retry) might: members in another order, whitespace
// between tokens, numbers spelled 1, 1.0 or 1e0, characters as \u escapes.
// Every text parses back to the same value, so RFC 8785 gives each the same
// canonical form; a fingerprint over the raw text gives each a different one.
import type { Rng } from '#harness/rng.ts'

export type Style = {
  /** Member order: as written, shuffled in every object, or shuffled only below the top level. */
  order: 'original' | 'shuffled' | 'nested-shuffled'
  whitespace: boolean
  /** Every number written another way with the same value (1 → 1.0, 1e0, 10e-1…). */
  respellNumbers: boolean
  /** Every non-ASCII character (and some ASCII ones) written as a \u escape. */
  escapeStrings: boolean
}

export const PLAIN: Style = { order: 'original', whitespace: false, respellNumbers: false, escapeStrings: false }

export function serialize(value: unknown, style: Style, rng: Rng): string {
  return write(value, style, rng, 0)
}

function write(value: unknown, style: Style, rng: Rng, depth: number): string {
  const gap = () => (style.whitespace ? rng.pick(['', ' ', '  ', '\n', '\t', '\r\n  ']) : '')
  if (typeof value === 'number') return style.respellNumbers ? respell(value, rng) : JSON.stringify(value)
  if (typeof value === 'string') return style.escapeStrings ? escaped(value, rng) : JSON.stringify(value)
  if (Array.isArray(value)) return `[${gap()}${value.map((v) => write(v, style, rng, depth + 1)).join(`${gap()},${gap()}`)}${gap()}]`
  if (value !== null && typeof value === 'object') {
    const shuffle = style.order === 'shuffled' || (style.order === 'nested-shuffled' && depth > 0)
    const keys = shuffle ? reordered(Object.keys(value), rng) : Object.keys(value)
    const members = keys.map((k) => `${write(k, style, rng, depth)}${gap()}:${gap()}${write((value as Record<string, unknown>)[k], style, rng, depth + 1)}`)
    // At least one space right after the brace, so a whitespace variant always differs.
    return `{${style.whitespace ? ' ' : ''}${gap()}${members.join(`${gap()},${gap()}`)}${gap()}}`
  }
  return JSON.stringify(value)
}

/** A permutation that differs from the given order whenever there are two or more keys. */
function reordered(keys: string[], rng: Rng): string[] {
  const out = rng.shuffle(keys)
  if (keys.length > 1 && out.every((k, i) => k === keys[i])) out.push(out.shift()!)
  return out
}

/**
 * Another spelling of a finite number with exactly the same decimal value
 * (so the same double): 2500 → 2500.0, 25e2, 2.5E+3, 250e1…
 */
export function respell(n: number, rng: Rng): string {
  const plain = JSON.stringify(n)
  if (n === 0) return rng.pick(['0.0', '0e0', '0E+0', '0.000', '-0'])
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(plain)
  if (!m) throw new Error(`cannot respell ${plain}`)
  const [, sign, int, frac = '', exp = '0'] = m
  let digits = (int! + frac).replace(/^0+(?=\d)/, '')
  let e = Number(exp) - frac.length // value = sign digits × 10^e
  while (digits.length > 1 && digits.endsWith('0')) {
    digits = digits.slice(0, -1)
    e++
  }
  const E = () => rng.pick(['e', 'E'])
  const signed = (x: number) => (x < 0 ? String(x) : rng.pick(['', '+']) + x)
  const decimal = () => {
    if (e >= 0) return `${digits}${'0'.repeat(e)}.${'0'.repeat(rng.int(1, 3))}`
    const padded = digits.padStart(-e + 1, '0')
    return `${padded.slice(0, e)}.${padded.slice(e)}${'0'.repeat(rng.int(1, 3))}`
  }
  const candidates = [
    `${digits}${E()}${signed(e)}`,
    `${digits[0]}.${digits.slice(1) || '0'}${E()}${signed(e + digits.length - 1)}`,
    `${digits}0${E()}${signed(e - 1)}`,
    decimal(),
  ]
    .map((s) => sign + s)
    .filter((s) => s !== plain)
  return rng.pick(candidates)
}

/** The string as JSON text, with every non-ASCII character (and some others) as \u escapes. */
function escaped(s: string, rng: Rng): string {
  let out = '"'
  for (const ch of s) {
    const code = ch.codePointAt(0)!
    if (code > 0x7e || code < 0x20 || rng.chance(0.2)) {
      // A character outside the BMP is two UTF-16 code units, so two escapes.
      const upper = rng.chance(0.5)
      for (let i = 0; i < ch.length; i++) {
        const hex = ch.charCodeAt(i).toString(16).padStart(4, '0')
        out += `\\u${upper ? hex.toUpperCase() : hex}`
      }
    } else if (ch === '"' || ch === '\\') out += `\\${ch}`
    else if (ch === '/') out += rng.pick(['/', '\\/'])
    else out += ch
  }
  return `${out}"`
}
