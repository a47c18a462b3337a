// The damage report's vocabulary: each category, its JSON names, and the
// sentence that explains it (logs/README.md has the full definitions).
import { type FaultCounter, KINDS, type IncidentKind } from '../logs/faults.ts'
import type { KilledInstance } from './instances.ts'
import type { CodeKind } from './provenance.ts'

export const CATEGORIES = [
  {
    id: 'duplicateTransfers',
    amount: 'duplicateAmount',
    title: 'duplicate transfers',
    explain: 'ledger rows beyond the first for one intent: the money moved twice (won: the extra rows)',
  },
  {
    id: 'lostTransfers',
    amount: 'lostAmount',
    title: 'lost transfers',
    explain: 'intents that should have moved money and have no ledger row: the client was told success, or gave up',
  },
  {
    id: 'ignoredAmendments',
    amount: 'ignoredAmendmentAmount',
    title: 'silently ignored amendments',
    explain: 'a resubmission with another amount under the same key answered 2xx while the ledger shows the first amount (won: the difference)',
  },
  {
    id: 'leakedResponses',
    amount: 'leakedAmount',
    title: 'responses leaked across clients',
    explain: "answers caused by another client's use of the same key string: its 200 already-processed, 409, 422, any other 4xx from 405 up, or stored body",
  },
  {
    id: 'spurious422s',
    amount: 'spurious422Amount',
    title: 'spurious 422s',
    explain: 'a 422 for a request whose JSON equals the one first sent under that key (only the bytes differed)',
  },
  {
    id: 'stuckKeys',
    amount: 'stuckAmount',
    title: 'keys stuck at 409',
    explain: 'intents whose client used up its retry horizon and still heard 409 in progress',
  },
  {
    id: 'unreplayedRetries',
    amount: 'unreplayedAmount',
    title: 'retries without the original response',
    explain:
      "a retry or double tap answered 2xx without this intent's own receipt (e.g. already-processed, or 200 where the first answer was 402), or the first answer's outcome again with other bytes (a 402 or a receipt recomputed, not replayed)",
  },
] as const

export type CategoryId = (typeof CATEGORIES)[number]['id']
export type AmountId = (typeof CATEGORIES)[number]['amount']
export type Figures = Record<CategoryId | AmountId, number>

export type DamageReport = {
  stage: number
  slug: string
  /** starter, solution, or the --dir path. */
  source: string
  /** Whose code ran: the learner's, the untouched starter, or the solution (replay/provenance.ts). */
  code: CodeKind
  day: { file: string; sha256: string; lines: number; intents: number }
  /** Attempts really sent (retries that were not needed are skipped). */
  requests: number
  skippedRetries: number
  /** Wall time of the replay itself (accounts opened until the last answer). */
  replayMs: number
  attemptsPerSecond: number
  /** How often the replay really applied each fault (logs/faults.ts), and how many restarts it made. */
  faults: Record<FaultCounter, number> & { restarts: number }
  /** The bank's instances behind the round-robin proxy (replay/instances.ts): requests forwarded to each, and which were SIGKILLed. */
  instances: { count: number; forwarded: number[]; killed: KilledInstance[] }
  byKind: Record<IncidentKind, Figures>
  /** One concrete case per category, to start an investigation from. */
  examples: Partial<Record<CategoryId, string>>
  /** What the accounting could not explain (ledger rows of no intent, refused intents that moved money). Empty when all is well. */
  anomalies: string[]
} & Figures

export function zeroFigures(): Figures {
  return Object.fromEntries(
    CATEGORIES.flatMap((c) => [
      [c.id, 0],
      [c.amount, 0],
    ]),
  ) as Figures
}

export function zeroByKind(): Record<IncidentKind, Figures> {
  return Object.fromEntries(KINDS.map((k) => [k, zeroFigures()])) as Record<IncidentKind, Figures>
}

export const totalDamage = (f: Figures) => CATEGORIES.reduce((n, c) => n + f[c.id], 0)
