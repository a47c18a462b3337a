// How each client's JSON library writes the same payload. The bytes differ,
// the JSON value does not: exactly what a fingerprint over the raw text gets
// wrong and a canonical fingerprint (RFC 8785) gets right.
import type { Rng } from '#harness/rng.ts'

export type Style =
  /** JavaScript's JSON.stringify: compact, keys in insertion order. */
  | 'js'
  /** Swift's JSONEncoder over a Dictionary: compact, key order different on every encoding, "/" escaped. */
  | 'swift'
  /** JSON.stringify(value, null, 2), as a desk application logs and sends it. */
  | 'pretty'
  /** Python's json.dumps defaults: ", " and ": " separators, non-ASCII escaped as \uXXXX. */
  | 'python'
  /** The same Python client's retry wrapper: sort_keys=True, and the amount became a float (250000.0). */
  | 'python-retry'

type Json = string | number | boolean | null | Json[] | { [key: string]: Json }

type Options = {
  order: (keys: string[]) => string[]
  comma: string
  colon: string
  indent: string
  asciiOnly: boolean
  escapeSlash: boolean
  /** Members with these names are written as floats when whole (Python's 250000.0). */
  floatKeys: readonly string[]
}

function writeString(s: string, o: Options): string {
  let out = JSON.stringify(s)
  if (o.asciiOnly) out = out.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  if (o.escapeSlash) out = out.replaceAll('/', '\\/')
  return out
}

function write(value: Json, o: Options, depth: number, name = ''): string {
  if (typeof value === 'string') return writeString(value, o)
  if (typeof value === 'number') return o.floatKeys.includes(name) && Number.isInteger(value) ? `${value}.0` : JSON.stringify(value)
  if (typeof value === 'boolean' || value === null) return JSON.stringify(value)
  const inner = o.indent ? `\n${o.indent.repeat(depth + 1)}` : ''
  const outer = o.indent ? `\n${o.indent.repeat(depth)}` : ''
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    return `[${inner}${value.map((v) => write(v, o, depth + 1)).join(`${o.comma}${inner}`)}${outer}]`
  }
  const keys = o.order(Object.keys(value))
  if (keys.length === 0) return '{}'
  const members = keys.map((k) => `${writeString(k, o)}${o.colon}${write(value[k]!, o, depth + 1, k)}`)
  return `{${inner}${members.join(`${o.comma}${inner}`)}${outer}}`
}

const asIs = (keys: string[]) => keys
const compact = { comma: ',', colon: ':', indent: '', asciiOnly: false, escapeSlash: false, floatKeys: [] }

export function serialize(value: Json, style: Style, rng: Rng): string {
  switch (style) {
    case 'js':
      return write(value, { ...compact, order: asIs }, 0)
    case 'swift':
      return write(value, { ...compact, order: (keys) => rng.shuffle(keys), escapeSlash: true }, 0)
    case 'pretty':
      return write(value, { ...compact, order: asIs, comma: ',', colon: ': ', indent: '  ' }, 0)
    case 'python':
      return write(value, { ...compact, order: asIs, comma: ', ', colon: ': ', asciiOnly: true }, 0)
    case 'python-retry':
      return write(value, { ...compact, order: (keys) => [...keys].sort(), comma: ', ', colon: ': ', asciiOnly: true, floatKeys: ['amount'] }, 0)
  }
}

export type { Json }
