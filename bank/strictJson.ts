// What JSON.parse cannot tell the bank about a body, read from its text.
//
// JSON.parse keeps the last of two members with one name, turns a lone
// surrogate escape into a string that has no UTF-8 form, rounds
// 0.99999999999999999999 to 1, and hands back values nested as deep as the
// body is long. Each of those lets the bank act on something other than what
// the client wrote (or, for depth, lets a recursive validator overflow the
// stack). So after JSON.parse accepted the text, one pass over it, with an
// explicit stack (no recursion, whatever the depth), reports:
// - whether it nests deeper than a limit (the scan stops there);
// - duplicate member names, at any depth, compared after unescaping;
// - strings (values or names) that hold a lone surrogate (RFC 7493, I-JSON);
// - the number literals of the top-level members, as written.
// The input must be text JSON.parse accepted: the scanner checks no syntax.

export type JsonIssue = { path: string; message: string }

export type JsonScan =
  | { tooDeep: true }
  | {
      tooDeep: false
      issues: JsonIssue[]
      /** Top-level member name → its number literal exactly as written (only members whose value is a number). */
      topLevelNumbers: Map<string, string>
    }

/** Issues beyond this many are not listed: a body of 5,000 duplicates gets a short answer. */
const MAX_ISSUES = 20

type Frame =
  | { kind: 'object'; path: string; names: Set<string>; name: string | undefined; expectName: boolean }
  | { kind: 'array'; path: string; index: number }

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y

/** Reads the JSON text `text` (already accepted by JSON.parse); depth counts enclosing arrays and objects. */
export function scanJson(text: string, maxDepth: number): JsonScan {
  const stack: Frame[] = []
  const issues: JsonIssue[] = []
  const topLevelNumbers = new Map<string, string>()
  const report = (path: string, message: string) => {
    if (issues.length < MAX_ISSUES) issues.push({ path, message })
  }
  /** The path of the value that starts now, as zod writes paths (`metadata.tags.0`). */
  const valuePath = () => {
    const top = stack.at(-1)
    if (!top) return ''
    const step = top.kind === 'array' ? String(top.index) : top.name!
    return top.path === '' ? step : `${top.path}.${step}`
  }

  // Node's body parser drops a leading byte order mark before JSON.parse; so do we.
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  while (i < text.length) {
    const c = text[i]!
    const top = stack.at(-1)
    if (c === '{' || c === '[') {
      if (stack.length >= maxDepth) return { tooDeep: true }
      const path = valuePath()
      stack.push(c === '{' ? { kind: 'object', path, names: new Set(), name: undefined, expectName: true } : { kind: 'array', path, index: 0 })
      i++
    } else if (c === '}' || c === ']') {
      stack.pop()
      i++
    } else if (c === ',') {
      if (top?.kind === 'array') top.index++
      else if (top) top.expectName = true
      i++
    } else if (c === ':') {
      if (top?.kind === 'object') top.expectName = false
      i++
    } else if (c === '"') {
      const end = endOfString(text, i)
      const value = JSON.parse(text.slice(i, end)) as string
      if (top?.kind === 'object' && top.expectName) {
        top.name = value
        const path = valuePath()
        if (!value.isWellFormed()) report(path, 'the member name holds a lone surrogate (not I-JSON, RFC 7493)')
        if (top.names.has(value)) report(path, 'a member name appears twice in one object (not I-JSON, RFC 7493)')
        top.names.add(value)
      } else if (!value.isWellFormed()) report(valuePath(), 'the string holds a lone surrogate (not I-JSON, RFC 7493)')
      i = end
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = i
      const literal = NUMBER.exec(text)![0]
      if (stack.length === 1 && top?.kind === 'object') topLevelNumbers.set(top.name!, literal)
      i += literal.length
    } else if (c === 't' || c === 'n') i += 4
    else if (c === 'f') i += 5
    else i++ // whitespace
  }
  return { tooDeep: false, issues, topLevelNumbers }
}

/** The index just past the closing quote of the string token starting at `start`. */
function endOfString(text: string, start: number): number {
  let i = start + 1
  for (;;) {
    const c = text.charCodeAt(i)
    if (c === 0x22) return i + 1 // "
    i += c === 0x5c ? 2 : 1 // a backslash escapes the next character (\" included)
  }
}

/**
 * Whether a JSON number literal denotes an integer exactly: `250000`,
 * `250000.0`, `2.5e5` do; `0.99999999999999999999`, `1.5`, `1e-1` do not,
 * even when the double JSON.parse makes of them is a whole number.
 */
export function isExactInteger(literal: string): boolean {
  const m = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(literal)
  if (!m) return false
  const digits = (m[1]! + (m[2] ?? '')).replace(/^0+/, '')
  // value = digits × 10^scale; it is whole when the digits below 10^0 are all zeros.
  const scale = Number(m[3] ?? '0') - (m[2]?.length ?? 0)
  if (scale >= 0 || digits === '') return true
  return -scale <= digits.length ? /^0*$/.test(digits.slice(scale)) : false
}
