// Given to stage 2 on, solved: a copy of solutions/01-unique-key/keyHeader.ts.
// test/given.test.ts keeps it identical to that file; edit the solution, then copy.
//
// Reads the Idempotency-Key header.
//
// The IETF draft defines the value as a Structured Field String, so it arrives
// quoted: Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324". Real clients
// (Stripe's libraries among them) send it bare. Both spell the same key: a
// quoted value is parsed as an RFC 8941 string, anything else is taken as is.
// Either way the key must be 1–255 printable ASCII characters; we check that
// before anything else touches the key.
import { parseItem } from 'structured-headers'
import { malformedKey, missingKey } from '#bank/idempotencyAnswers.ts'
import type { Outcome } from '#bank/layer.ts'

export const MAX_KEY_LENGTH = 255 // Stripe's limit

/** The key, or the 400 problem to answer with. */
export function parseIdempotencyKey(header: string | undefined): string | Outcome {
  if (header === undefined) return missingKey()
  let key = header
  if (header.startsWith('"')) {
    try {
      const [value, params] = parseItem(header)
      if (typeof value !== 'string' || params.size > 0) return malformedKey('A quoted key must be a plain string, without parameters.')
      key = value
    } catch {
      return malformedKey('A quoted key must be a valid Structured Field String (RFC 8941).')
    }
  }
  if (key.length === 0) return malformedKey('The key is empty.')
  if (key.length > MAX_KEY_LENGTH) return malformedKey(`The key is longer than ${MAX_KEY_LENGTH} characters.`)
  // Printable ASCII only (space to tilde): no control characters, no bytes
  // that different proxies would decode differently.
  if (!/^[\x20-\x7e]+$/.test(key)) return malformedKey('The key may contain printable ASCII characters only.')
  return key
}
