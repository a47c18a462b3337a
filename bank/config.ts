// Every knob of the bank comes from the environment, so the grader can start
// the same code as many processes with different settings. The settings (the
// second half) may also change while the bank runs: the grader gives a
// running instance new ones between checks (PUT /admin/instance,
// generations.ts) instead of starting another process.
import { z } from 'zod'
import { DEFAULT_ADMIN_TOKEN } from './auth.ts'

/** The latest moment a JavaScript Date can hold (ms since the epoch): no clock stands past it. */
export const LATEST_INSTANT_MS = 8.64e15

const ms = (fallback: number) => z.coerce.number().int().min(0).default(fallback)

/** Where the bank listens and keeps its data, and who may administer it: fixed for the life of the process, but for the database. */
const place = z.object({
  LAB_HOST: z.string().default('127.0.0.1'),
  LAB_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LAB_DB: z.string().default('bank.sqlite'),
  LAB_ADMIN_TOKEN: z.string().min(8).default(DEFAULT_ADMIN_TOKEN),
  // The folder whose idempotency.ts wraps every money-moving POST.
  LAB_STAGE_DIR: z.string().default('stages/00-unprotected'),
  // Stage 6: a PostgreSQL URL instead of the SQLite file (pg/store.ts).
  LAB_DATABASE_URL: z.string().optional(),
  // Set only by the grader, with its own admin token (auth.ts): the bank's
  // clock stands at this value (ms since the epoch) until the grader moves it
  // with PUT /admin/clock (clock.ts). Any other bank ignores it.
  LAB_CLOCK_NOW_MS: z.coerce.number().int().min(0).max(LATEST_INSTANT_MS).optional(),
})

/**
 * The settings: one variable each, read at start and changeable while the
 * bank runs. One table, so the environment, the admin route and the grader
 * (which renders them back into variables for a restart) agree on names.
 */
export const SETTINGS = {
  // Time the simulated core-banking call takes between accepting a transfer
  // and committing it. The grader raises it to open race windows.
  processingDelayMs: { variable: 'LAB_PROCESSING_DELAY_MS', schema: ms(0) },
  // How long an in_progress claim protects itself before a retry may take it over (stage 3+).
  leaseMs: { variable: 'LAB_LEASE_MS', schema: ms(30_000) },
  // How long a key is remembered after its first request (stage 5).
  keyTtlMs: { variable: 'LAB_KEY_TTL_MS', schema: ms(24 * 60 * 60 * 1000) },
  // Largest JSON body accepted, in bytes.
  bodyLimit: {
    variable: 'LAB_BODY_LIMIT',
    schema: z.coerce
      .number()
      .int()
      .min(1)
      .default(16 * 1024),
  },
  // Stage 6: the PostgreSQL pool's size.
  poolMax: { variable: 'LAB_DB_POOL_MAX', schema: z.coerce.number().int().min(1).default(10) },
  // This instance's clock offset (the grader skews instances' clocks; any stage honours it): at most a day either way.
  clockOffsetMs: { variable: 'LAB_CLOCK_OFFSET_MS', schema: z.coerce.number().int().min(-86_400_000).max(86_400_000).default(0) },
} as const

export type Settings = { [K in keyof typeof SETTINGS]: number }
export type SettingName = keyof Settings

const settingNames = Object.keys(SETTINGS) as SettingName[]

/** The settings as JSON (PUT /admin/instance): each optional, a missing one is its default. */
export const SettingsBody = z.strictObject(
  Object.fromEntries(settingNames.map((name) => [name, SETTINGS[name].schema])) as {
    [K in SettingName]: (typeof SETTINGS)[K]['schema']
  },
)

export type Config = {
  host: string
  port: number
  dbPath: string
  adminToken: string
  stageDir: string
  databaseUrl: string | undefined
  clockNowMs: number | undefined
} & Settings

/** The settings a set of variables gives (each missing one at its default). */
export function settingsFromEnv(env: NodeJS.ProcessEnv): Settings {
  return Object.fromEntries(settingNames.map((name) => [name, SETTINGS[name].schema.parse(env[SETTINGS[name].variable])])) as Settings
}

/** The variables that start a bank with these settings (only those given). */
export function settingsEnv(settings: Partial<Settings>): Record<string, string> {
  return Object.fromEntries(settingNames.filter((name) => settings[name] !== undefined).map((name) => [SETTINGS[name].variable, String(settings[name])]))
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = place.parse(env)
  return {
    host: e.LAB_HOST,
    port: e.LAB_PORT,
    dbPath: e.LAB_DB,
    adminToken: e.LAB_ADMIN_TOKEN,
    stageDir: e.LAB_STAGE_DIR,
    databaseUrl: e.LAB_DATABASE_URL,
    clockNowMs: e.LAB_CLOCK_NOW_MS,
    ...settingsFromEnv(env),
  }
}
