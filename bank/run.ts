// The bank process around a stage's layer: its clock, its store (the SQLite
// file, or PostgreSQL when LAB_DATABASE_URL is set), the layer and the app,
// and the HTTP server. Prints "listening on http://HOST:PORT" (or
// "unix:PATH") once it accepts connections: the grader waits for that line,
// then for GET /health.
//
// main.ts runs it with the layer of LAB_STAGE_DIR; the grader runs the same
// function from one bundle of the bank and the learner's folder (harness/serverBuild.ts).
import { DEFAULT_ADMIN_TOKEN, isGraderToken } from './auth.ts'
import { installClock, processClock } from './clock.ts'
import { type Config, loadConfig } from './config.ts'
import { CoreBanking } from './core.ts'
import { createApp } from './app.ts'
import { openDatabase } from './db.ts'
import { type GenerationParts, type Generations, startGenerations } from './generations.ts'
import { createHttpServer } from './httpServer.ts'
import type { CreateLayer, StoreKind } from './layer.ts'
import { sqliteStore } from './sqliteStore.ts'
import type { Store } from './store.ts'
import type { RequestListener } from 'node:http'
import type { Express } from 'express'

/** The host names of this machine's own interface. */
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost'])

/**
 * What a caller may put around each generation's app, and how the listening
 * line names what runs: test/fixtures/express-idempotency mounts an npm library
 * in front of the money routes (bank/app.ts has no hook before them).
 */
export type RunOptions = { wrapApp?: (app: Express, config: Config) => RequestListener; describe?: string }

export async function runBank(createLayer: CreateLayer<StoreKind>, options: RunOptions = {}): Promise<void> {
  const config = loadConfig()
  // LAB_SOCKET: a Unix socket instead of a port, for the grader's sandbox, which has no network.
  const socket = process.env.LAB_SOCKET
  // Everyone knows the default token: it may guard a bank only this machine can reach.
  if (config.adminToken === DEFAULT_ADMIN_TOKEN && !socket && !LOOPBACK.has(config.host)) {
    console.error(`LAB_ADMIN_TOKEN is the default one, which everybody knows: set a token of your own to listen on ${config.host}`)
    process.exit(1)
  }
  // Only the grader moves a clock, and only the grader has its token: anyone else's LAB_CLOCK_NOW_MS is not obeyed.
  const graded = config.clockNowMs !== undefined && isGraderToken(config.adminToken)
  if (config.clockNowMs !== undefined && !graded)
    console.error("LAB_CLOCK_NOW_MS ignored: only a bank the grader starts, with the grader's admin token, has a clock that can be moved")
  // Before the layer runs: whatever it reads of Date reads this clock.
  installClock({ offsetMs: config.clockOffsetMs, startMs: graded ? config.clockNowMs : undefined })

  // PostgreSQL's driver is imported only for PostgreSQL: the SQLite stages load none of it.
  const openStore = async (config: Config): Promise<Store<StoreKind>> =>
    config.databaseUrl ? (await import('./pg/store.ts')).openPgStore(config.databaseUrl, config.poolMax) : sqliteStore(openDatabase(config.dbPath))

  let generations: Generations | undefined
  const open = async (config: Config, keep?: Store<StoreKind>): Promise<GenerationParts> => {
    processClock().setOffset(config.clockOffsetMs)
    const store = keep ?? (await openStore(config))
    const layer = await createLayer({ ...store.layerContext, config })
    const core = new CoreBanking(config.processingDelayMs)
    const app = createApp(store, config, layer, { core, generations: () => generations! })
    return { config, store, core, app: options.wrapApp ? options.wrapApp(app, config) : app }
  }
  generations = await startGenerations(config, open)

  const http = createHttpServer(generations.handler)
  const onListening = () => {
    const address = http.address()
    const where = socket ? `unix:${socket}` : `http://${config.host}:${typeof address === 'object' && address ? address.port : config.port}`
    console.log(`listening on ${where} (${options.describe ?? 'stage'} ${config.stageDir}, pid ${process.pid})`)
  }
  if (socket) http.listen(socket, onListening)
  else http.listen(config.port, config.host, onListening)

  function shutdown() {
    http.close(() => {
      generations!.current.store.close()
      process.exit(0)
    })
    http.closeIdleConnections()
    // In-flight requests get a moment to finish; then we go regardless.
    setTimeout(() => process.exit(0), 2_000).unref()
  }
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
}
