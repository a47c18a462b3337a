// What a replayed answer looks like (stage 4's contract), for the checks of
// later stages that need to tell a replay from an execution.
import { fail } from '../check.ts'
import type { Reply } from '../http.ts'

const MARKER = 'idempotent-replayed'
/** The headers a replay carries over from the first response. */
const REPLAYED_HEADERS = ['content-type', 'location']

/** Marked as a replay (whatever its value: a wrong value is expectReplayOf's business). */
export const isReplay = (reply: Reply) => reply.headers[MARKER] !== undefined

/** `replay` is `original` again, byte for byte, and says so. */
export function expectReplayOf(original: Reply, replay: Reply, what: string): void {
  if (replay.status !== original.status)
    fail(`${what}: a replay carries the original status`, { exchange: replay.exchange, expected: `HTTP ${original.status}`, got: `HTTP ${replay.status}` })
  if (replay.text !== original.text)
    fail(`${what}: a replay sends the stored body, byte for byte, not a new one`, { exchange: replay.exchange, expected: original.text, got: replay.text })
  for (const header of REPLAYED_HEADERS)
    if (replay.headers[header] !== original.headers[header])
      fail(`${what}: a replay carries the original ${header}`, {
        exchange: replay.exchange,
        expected: `${header}: ${original.headers[header] ?? '(none)'}`,
        got: `${header}: ${replay.headers[header] ?? '(none)'}`,
      })
  if (replay.headers[MARKER] !== 'true')
    fail(`${what}: a replay is marked so that clients and logs can tell`, {
      exchange: replay.exchange,
      expected: 'Idempotent-Replayed: true',
      got: isReplay(replay) ? `Idempotent-Replayed: ${replay.headers[MARKER]}` : '(no Idempotent-Replayed header)',
    })
}

/** A response that executed must not claim to be a replay. */
export function expectFirstAnswer(reply: Reply, what: string): void {
  if (isReplay(reply))
    fail(`${what}: this request executed; only a replay carries Idempotent-Replayed`, {
      exchange: reply.exchange,
      expected: '(no Idempotent-Replayed header)',
      got: `Idempotent-Replayed: ${reply.headers[MARKER]}`,
    })
}
