// Given to stage 3 on, solved: a copy of solutions/02-fingerprint/canonicalize.ts.
// test/given.test.ts keeps it identical to that file; edit the solution, then copy.
//
// RFC 8785, the JSON Canonicalization Scheme (JCS), for values JSON.parse made.
//
// Two serializations of the same payload must give the same bytes, whatever
// the client's library did with key order, whitespace, number spelling
// (1.0, 1, 1e0) or string escapes ("\u00e9" vs "é"). So: sort object keys,
// drop all whitespace, and write numbers and strings one way only.
export function canonicalize(value: unknown): string {
  if (value === null || typeof value === 'boolean') return String(value)
  if (typeof value === 'number') {
    // JCS numbers are ECMAScript's Number-to-String, which JSON.stringify
    // uses; it also turns -0 into 0. NaN and Infinity are not JSON.
    if (!Number.isFinite(value)) throw new TypeError(`${value} is not a JSON number`)
    return JSON.stringify(value)
  }
  if (typeof value === 'string') return canonicalString(value)
  if (Array.isArray(value)) return `[${value.map(canonicalize).join(',')}]`
  if (typeof value === 'object') {
    // The default sort compares UTF-16 code units, exactly what JCS asks for
    // (not code points, and not the locale's collation).
    const keys = Object.keys(value).sort()
    const members = keys.map((k) => `${canonicalString(k)}:${canonicalize((value as Record<string, unknown>)[k])}`)
    return `{${members.join(',')}}`
  }
  throw new TypeError(`a ${typeof value} is not a JSON value`)
}

function canonicalString(s: string): string {
  // JCS input must be I-JSON (RFC 7493): a lone surrogate is not a character
  // and has no UTF-8 form, so it cannot be canonicalized.
  if (!s.isWellFormed()) throw new TypeError('the string contains a lone surrogate')
  // JSON.stringify escapes exactly what JCS escapes (", \, control
  // characters, with \b \f \n \r \t short forms) and nothing else.
  return JSON.stringify(s)
}
