// The four kinds of client the bank serves on the day, and how each behaves:
// when it is busy, what it sends, how its library serializes JSON, what it
// uses as an Idempotency-Key and how it retries. logs/README.md says why.
import type { ClientName } from './format.ts'
import type { Style } from './serialize.ts'

export type ClientProfile = {
  name: ClientName
  /** Prefix of its logical account names, e.g. mob-017. */
  accountPrefix: string
  accounts: number
  /** Accounts that hold almost nothing: only insufficient-funds intents debit them. */
  lowAccounts: number
  /** Share of the day's ordinary intents. */
  share: number
  /** Relative traffic per hour of the day, 00 to 23 (the batch job uses runs instead). */
  hourly: readonly number[]
  amount: { min: number; max: number }
  /** Share of its intents that are cash deposits (the others are transfers). */
  depositShare: number
  /** How its library writes the first request, and how it writes a retry. */
  style: Style
  retryStyle: Style
  /** Its library writes the body again for a retry, so the retry's bytes differ from the first request's. */
  reserializes: boolean
  keyStyle: 'uuid' | 'quoted-uuid' | 'order-number'
  /** Seconds waited before each retry; their sum is the client's retry horizon. */
  backoffSeconds: readonly number[]
}

// A consumer day: quiet at night, a lunch peak, a bigger evening peak.
const consumer = [3, 2, 1, 1, 1, 2, 4, 8, 11, 10, 9, 10, 14, 12, 9, 9, 10, 11, 13, 15, 16, 14, 9, 5]
// Shopping leans to the evening.
const shop = [4, 3, 2, 1, 1, 1, 2, 4, 6, 7, 8, 9, 11, 10, 9, 9, 10, 12, 15, 18, 20, 18, 12, 7]
// A branch counter: open 09:00 to 16:00.
const branch = [0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 14, 14, 8, 12, 14, 12, 0, 0, 0, 0, 0, 0, 0, 0]

export const PROFILES: Record<ClientName, ClientProfile> = {
  'mobile-app': {
    name: 'mobile-app',
    accountPrefix: 'mob',
    accounts: 120,
    lowAccounts: 4,
    share: 0.55,
    hourly: consumer,
    amount: { min: 1_000, max: 300_000 },
    depositShare: 0,
    style: 'swift',
    retryStyle: 'swift',
    reserializes: true,
    keyStyle: 'uuid',
    backoffSeconds: [1, 2, 4, 8, 16, 32, 64],
  },
  'web-app': {
    name: 'web-app',
    accountPrefix: 'web',
    accounts: 60,
    lowAccounts: 3,
    share: 0.25,
    hourly: shop,
    amount: { min: 5_000, max: 1_500_000 },
    depositShare: 0,
    style: 'js',
    retryStyle: 'js',
    reserializes: false,
    keyStyle: 'order-number',
    backoffSeconds: [0.5, 1, 2, 4, 8, 16, 32, 64],
  },
  'teller-desk': {
    name: 'teller-desk',
    accountPrefix: 'tel',
    accounts: 40,
    lowAccounts: 0,
    share: 0.1,
    hourly: branch,
    amount: { min: 10_000, max: 5_000_000 },
    depositShare: 0.6,
    style: 'pretty',
    retryStyle: 'pretty',
    reserializes: false,
    keyStyle: 'quoted-uuid',
    backoffSeconds: [20, 20, 20, 20, 20, 20],
  },
  'partner-batch': {
    name: 'partner-batch',
    accountPrefix: 'ptn',
    accounts: 20,
    lowAccounts: 0,
    share: 0.1,
    hourly: [],
    amount: { min: 50_000, max: 20_000_000 },
    depositShare: 0,
    style: 'python',
    retryStyle: 'python-retry',
    reserializes: true,
    keyStyle: 'order-number',
    backoffSeconds: [30, 60, 120, 240, 480],
  },
}

/** The batch job's runs: when each starts, its share of the job's intents, and the pause between requests. */
export const BATCH_RUNS = [
  { start: '02:00:00.000', share: 0.6 },
  { start: '14:00:00.000', share: 0.4 },
] as const
export const BATCH_GAP_MS = { min: 40, max: 120 }

/** Retries get up to this fraction of extra random delay (jitter), as real retry loops do. */
export const JITTER = 0.1

export const accountName = (p: ClientProfile, n: number) => `${p.accountPrefix}-${String(n).padStart(3, '0')}`
export const lowAccountName = (p: ClientProfile, n: number) => `${p.accountPrefix}-low-${n}`
