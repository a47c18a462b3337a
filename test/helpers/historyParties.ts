// The two clients of a hand-made history (the timeline's and the replay's
// tests): the grade's API keys and account ids, which a replay must never
// send as they are.
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
