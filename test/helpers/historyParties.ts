// The makings of a hand-made history (the timeline's and the replay's tests):
// the two clients, with the grade's API keys and account ids, which a replay
// must never send as they are; a money request as the grade's HTTP client
// records it; and a send step.
import type { Exchange } from '#harness/http.ts'
import type { SendOp } from '#grader/model/history.ts'
import type { Party } from '#grader/model/runHistory.ts'

export const A: Party = {
  label: 'A',
  name: 'history-a',
  apiKey: 'sk_grade_AAAAAAAAAAAAAAAAAAAAAAAA',
  accounts: ['acc_grade_a0', 'acc_grade_a1'],
  openingBalance: 40_000,
}

export const B: Party = {
  label: 'B',
  name: 'history-b',
  apiKey: 'sk_grade_BBBBBBBBBBBBBBBBBBBBBBBB',
  accounts: ['acc_grade_b0', 'acc_grade_b1'],
  openingBalance: 40_000,
}

/** A money request as the grade's HTTP client records it: over the grade's Unix socket (gone once the grade ends), the client's API key in it. */
export const recordedPost = (socketPath: string, path: string, who: Party, key: string, body: string, extra: Record<string, string> = {}): Exchange => ({
  request: {
    method: 'POST',
    url: `http://localhost${path}`,
    socketPath,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${who.apiKey}`, 'Idempotency-Key': key, ...extra },
    body,
  },
  ms: 1,
})

/** A send of client A's intent 0 under key slot `key`, as it is, on `instance`; `more` changes what the step needs. */
export const sendStep = (instance: number, key: 0 | 1, more: Partial<SendOp> = {}): SendOp => ({
  op: 'send',
  instance,
  client: 0,
  key,
  quoted: false,
  form: 'as-is',
  intent: 0,
  change: 'same',
  spelling: 0,
  extraHeaders: [],
  crashAfterCommit: false,
  holdAlone: false,
  ...more,
})
