// What a retry under a known key did, judged by its effects: a new ledger row
// means it executed; the first response's status and body bytes again, with
// no new row, mean the server still remembered the key. The
// Idempotent-Replayed marker is stage 4's convention, not evidence: a layer
// that replays correctly without it has not forgotten anything.
import type { Ledger, LedgerEntry } from '#harness/bankClient.ts'
import type { Reply } from '#harness/http.ts'

export type RetryVerdict = 'remembered' | 'executed' | 'refused'

/** `matches` picks the ledger rows of this intent (same accounts and amount). */
export function judgeRetry(first: Reply, retry: Reply, before: Ledger, after: Ledger, matches: (e: LedgerEntry) => boolean): RetryVerdict {
  const rows = (l: Ledger) => l.entries.filter(matches).length
  if (rows(after) > rows(before)) return 'executed'
  if (retry.status === first.status && retry.text === first.text) return 'remembered'
  return 'refused'
}

/** The rows of one deposit or transfer intent. */
export const sameIntent =
  (body: { from?: string; to: string; amount: number }) =>
  (e: LedgerEntry): boolean =>
    e.to === body.to && e.amount === body.amount && (e.from ?? undefined) === body.from
