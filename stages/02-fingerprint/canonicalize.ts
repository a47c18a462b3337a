// RFC 8785, the JSON Canonicalization Scheme (JCS), for values JSON.parse made.
//
// Two serializations of the same payload must give the same bytes, whatever
// the client's library did with key order, whitespace, number spelling
// (1.0, 1, 1e0) or string escapes ("\u00e9" vs "é"). So: sort object keys,
// drop all whitespace, and write numbers and strings one way only.
export function canonicalize(value: unknown): string {
  // TODO: return the canonical JSON text of `value`. It is what JSON.parse
  // produced: null, a boolean, a number, a string, an array or a plain object.
  //  - null, true, false: as is.
  //  - a number: ECMAScript's Number-to-String, which JSON.stringify(n)
  //    writes (and it writes -0 as 0). NaN and Infinity are not JSON: throw.
  //  - a string: JSON.stringify(s) escapes exactly what JCS escapes. But a
  //    string with a lone surrogate ("\ud800" alone) is not I-JSON and has no
  //    UTF-8 form: throw (String.prototype.isWellFormed tells you).
  //  - an array: "[" + its canonical elements joined by "," + "]".
  //  - an object: its keys sorted by UTF-16 code units (what the default
  //    Array.prototype.sort does, not localeCompare), each written as
  //    canonical key string + ":" + canonical value, joined by ",", in "{}".
  //    Sort at EVERY depth, not only the top level.
  // The grader checks this function directly against RFC 8785's examples.
  throw new Error(`canonicalize.ts: canonicalize() is not written yet (it was given a value of type ${typeof value})`)
}
