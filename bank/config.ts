// Every knob of the bank comes from the environment, so the grader can start
// the same code as many processes with different settings.
import { z } from 'zod'

const ms = (fallback: number) => z.coerce.number().int().min(0).default(fallback)

const schema = z.object({
  LAB_HOST: z.string().default('127.0.0.1'),
  LAB_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  LAB_DB: z.string().default('bank.sqlite'),
  LAB_ADMIN_TOKEN: z.string().min(8).default('admin-secret-change-me'),
  // The folder whose idempotency.ts wraps every money-moving POST.
  LAB_STAGE_DIR: z.string().default('stages/00-unprotected'),
  // Time the simulated core-banking call takes between accepting a transfer
  // and committing it. The grader raises it to open race windows.
  LAB_PROCESSING_DELAY_MS: ms(0),
  // How long an in_progress claim protects itself before a retry may take it over (stage 3+).
  LAB_LEASE_MS: ms(30_000),
  // How long a key is remembered after its first request (stage 5).
  LAB_KEY_TTL_MS: ms(24 * 60 * 60 * 1000),
  // Largest JSON body accepted, in bytes.
  LAB_BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(1)
    .default(16 * 1024),
  // Stage 6: a PostgreSQL URL instead of the SQLite file (pg/store.ts), its pool
  // size, and this instance's clock offset (the grader skews instances' clocks;
  // any stage honours it).
  LAB_DATABASE_URL: z.string().optional(),
  LAB_DB_POOL_MAX: z.coerce.number().int().min(1).default(10),
  LAB_CLOCK_OFFSET_MS: z.coerce.number().int().default(0),
  // Set only by the grader: the bank's clock stands at this value (ms since
  // the epoch) until the grader moves it with PUT /admin/clock (clock.ts).
  LAB_CLOCK_NOW_MS: z.coerce.number().int().min(0).optional(),
})

export type Config = {
  host: string
  port: number
  dbPath: string
  adminToken: string
  stageDir: string
  processingDelayMs: number
  leaseMs: number
  keyTtlMs: number
  bodyLimit: number
  databaseUrl: string | undefined
  poolMax: number
  clockOffsetMs: number
  clockNowMs: number | undefined
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = schema.parse(env)
  return {
    host: e.LAB_HOST,
    port: e.LAB_PORT,
    dbPath: e.LAB_DB,
    adminToken: e.LAB_ADMIN_TOKEN,
    stageDir: e.LAB_STAGE_DIR,
    processingDelayMs: e.LAB_PROCESSING_DELAY_MS,
    leaseMs: e.LAB_LEASE_MS,
    keyTtlMs: e.LAB_KEY_TTL_MS,
    bodyLimit: e.LAB_BODY_LIMIT,
    databaseUrl: e.LAB_DATABASE_URL,
    poolMax: e.LAB_DB_POOL_MAX,
    clockOffsetMs: e.LAB_CLOCK_OFFSET_MS,
    clockNowMs: e.LAB_CLOCK_NOW_MS,
  }
}
