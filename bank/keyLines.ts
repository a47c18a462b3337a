// One Idempotency-Key per request, never a list of them.
//
// Node joins repeated header lines into one string ("k" and "k" become
// "k, k"), and so may any proxy (RFC 9110 §5.3 lets a recipient combine
// lines with commas). A client that repeats the header on a retry would then
// send a new key and move the money again. RFC 9651 defines the field as one
// Item: parsed from several lines, or from a line holding a list, it fails.
// The bank applies that before any layer runs, for every stage:
// - two or more lines: refused, whatever they hold;
// - one quoted line that is a list of items (`"a", "b"`): refused;
// - one bare line with a comma (`a, b`): refused too. A bare key is not a
//   Structured Field at all, and a stage's keyHeader.ts would take `a, b` as
//   the single key "a, b"; but it is exactly what two merged lines look like,
//   so the bank cannot know it is one. A key with a comma must be quoted.
// Everything else (one quoted string, one bare key) goes to the layer as is.
import { parseList } from 'structured-headers'
import { malformedKey } from './idempotencyAnswers.ts'
import type { Outcome } from './problem.ts'
import { unstorableReason } from './storableText.ts'

/** The 400 to answer instead of running the layer, or undefined when the field names at most one key. */
export function repeatedKeyProblem(headersDistinct: NodeJS.Dict<string[]>): Outcome | undefined {
  const lines = headersDistinct['idempotency-key'] ?? []
  if (lines.length > 1) return malformedKey(`Idempotency-Key was sent on ${lines.length} header lines; send it once (a retry repeats the same single key).`)
  const [line] = lines
  if (line === undefined) return undefined
  // Node's parser refuses NUL in a header, and reads its bytes as latin1 (no surrogates): a safety net for the one rule (storableText.ts).
  const why = unstorableReason(line)
  if (why) return malformedKey(`Idempotency-Key ${why}.`)
  if (line.startsWith('"')) {
    if (countItems(line) > 1) return malformedKey('Idempotency-Key holds a list of keys; send exactly one.')
  } else if (line.includes(','))
    return malformedKey(
      'A bare Idempotency-Key may not contain a comma: it reads as several keys (or merged header lines). Quote it as a Structured Field String to send a comma.',
    )
  return undefined
}

/** Items in a Structured Field List; a line that does not parse as one is left for the layer to refuse. */
function countItems(line: string): number {
  try {
    return parseList(line).length
  } catch {
    return 1
  }
}
