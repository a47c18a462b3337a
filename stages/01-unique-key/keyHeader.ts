// Reads the Idempotency-Key header.
//
// The IETF draft defines the value as a Structured Field String, so it arrives
// quoted: Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324". Real clients
// (Stripe's libraries among them) send it bare. Both spell the same key.
import { missingKey } from '#bank/idempotencyAnswers.ts'
import type { Outcome } from '#bank/layer.ts'

export const MAX_KEY_LENGTH = 255 // Stripe's limit

/** The key, or the 400 problem to answer with. */
export function parseIdempotencyKey(header: string | undefined): string | Outcome {
  if (header === undefined) return missingKey()
  // TODO: turn the header into the key, or into a 400 problem.
  //  1. A value that starts with `"` is the quoted form: parse it with
  //     parseItem from 'structured-headers' (RFC 8941). The key is the string
  //     inside. Not a plain string, parameters, or a parse error: malformed.
  //     Anything else is the bare form: the key is the header as it is.
  //  2. Then the key must be 1 to MAX_KEY_LENGTH characters, all printable
  //     ASCII (space to tilde: /^[\x20-\x7e]+$/).
  // A malformed key is answered with malformedKey(reason), a 400 problem,
  // from '#bank/idempotencyAnswers.ts'.
  return header
}
