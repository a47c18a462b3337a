// What a replayed answer looks like (stage 4's contract), split by property so
// that each check demands only its own: the stored outcome (status and body
// bytes), the replayed headers (Content-Type, Location), and the marker (a
// course rule). A check that needs a replay for its own property judges the
// outcome and only notes a missing header or marker: replay-exact and
// replay-marked are the checks that fail on those.
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import { fail, NONE } from '../engine/check.ts'
import { courseRule } from '../engine/courseRule.ts'
import type { Reply } from '#harness/http.ts'

// What these checks tell a learner, as templates the packs translate (i18n/<lang>.json, "messages": replies.<key>).
const say = phrases('replies', {
  originalStatus: '{what}: a replay carries the original status',
  storedBody: '{what}: a replay sends the stored body, byte for byte, not a new one',
  headerValue: '{header}: {value}',
  headerInstead: '{header}: {got} instead of {expected}',
  noMarker: 'no Idempotent-Replayed: true',
  hadButLacks: "{what} had the first answer's status and body bytes, but {deviations} (see replay-exact, replay-marked)",
  originalHeader: '{what}: a replay carries the original {header}',
  marked: '{what}: a replay is marked so that clients and logs can tell',
  noMarkerHeader: '(no Idempotent-Replayed header)',
  executedNotMarked: '{what}: this request executed; only a replay carries Idempotent-Replayed',
})

const MARKER = 'idempotent-replayed'
/** The headers a replay carries over from the first response. */
const REPLAYED_HEADERS = ['content-type', 'location']

/** Marked as a replay (whatever its value: a wrong value is expectMarked's business). */
export const isReplay = (reply: Reply) => reply.headers[MARKER] !== undefined

/** `reply` is the stored outcome of `original`: the same status and the same body bytes. */
export function expectStoredOutcome(original: Reply, reply: Reply, what: Line): void {
  if (reply.status !== original.status)
    fail(say('originalStatus', { what }), { exchange: reply.exchange, expected: `HTTP ${original.status}`, got: `HTTP ${reply.status}` })
  if (reply.text !== original.text) fail(say('storedBody', { what }), { exchange: reply.exchange, expected: original.text, got: reply.text })
}

/** Which replayed headers and marker `replay` lacks, in words (empty when it has them all). */
export function replayDeviations(original: Reply, replay: Reply): Phrase[] {
  const missing = REPLAYED_HEADERS.filter((h) => replay.headers[h] !== original.headers[h]).map((h) =>
    say('headerInstead', { header: h, got: replay.headers[h] ?? NONE, expected: original.headers[h] ?? NONE }),
  )
  if (replay.headers[MARKER] !== 'true') missing.push(say('noMarker'))
  return missing
}

/**
 * The stored outcome, for a check whose property is not the replay's form:
 * what else the replay lacks goes to a note (replay-exact and replay-marked fail on it).
 */
export function expectOutcomeReplayed(original: Reply, reply: Reply, what: Line, note: (line: Line) => void): void {
  expectStoredOutcome(original, reply, what)
  const deviations = replayDeviations(original, reply)
  if (deviations.length) note(say('hadButLacks', { what, deviations: listOf(deviations) }))
}

/** `replay` is `original` again: status, body bytes, and the allow-listed headers. */
export function expectReplayOf(original: Reply, replay: Reply, what: Line): void {
  expectStoredOutcome(original, replay, what)
  for (const header of REPLAYED_HEADERS)
    if (replay.headers[header] !== original.headers[header])
      fail(say('originalHeader', { what, header }), {
        exchange: replay.exchange,
        expected: say('headerValue', { header, value: original.headers[header] ?? NONE }),
        got: say('headerValue', { header, value: replay.headers[header] ?? NONE }),
      })
}

/** `replay` says it is one. */
export function expectMarked(replay: Reply, what: Line): void {
  if (replay.headers[MARKER] !== 'true')
    fail(courseRule('replayMarker', say('marked', { what })), {
      exchange: replay.exchange,
      expected: 'Idempotent-Replayed: true',
      got: isReplay(replay) ? `Idempotent-Replayed: ${replay.headers[MARKER]}` : say('noMarkerHeader'),
    })
}

/** A response that executed must not claim to be a replay. */
export function expectFirstAnswer(reply: Reply, what: Line): void {
  if (isReplay(reply))
    fail(courseRule('replayMarker', say('executedNotMarked', { what })), {
      exchange: reply.exchange,
      expected: '(no Idempotent-Replayed header)',
      got: `Idempotent-Replayed: ${reply.headers[MARKER]}`,
    })
}
