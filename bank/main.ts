// Starts the bank with one stage's idempotency layer:
//   LAB_STAGE_DIR=stages/01-unique-key tsx bank/main.ts
// Prints "listening on http://HOST:PORT" once it accepts connections (the
// grader waits for that line, then for GET /health).
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createApp } from './app.ts'
import { installClock } from './clock.ts'
import { loadConfig } from './config.ts'
import { openDatabase } from './db.ts'
import { createHttpServer } from './httpServer.ts'
import type { CreateLayer, StoreKind } from './layer.ts'
import { sqliteStore } from './sqliteStore.ts'
import type { Store } from './store.ts'

const config = loadConfig()
// Before the layer is loaded: whatever it reads of Date reads this clock.
installClock({ offsetMs: config.clockOffsetMs, startMs: config.clockNowMs })
// LAB_DATABASE_URL: PostgreSQL (stage 6), imported only then, so the SQLite stages load none of it; otherwise the SQLite file.
const store: Store<StoreKind> = config.databaseUrl
  ? await (await import('./pg/store.ts')).openPgStore(config.databaseUrl, config.poolMax)
  : sqliteStore(openDatabase(config.dbPath))
const app = await openBank(store)

/** The stage's layer on `store`'s tables (createLayer may be async), and the app around both. */
async function openBank<K extends StoreKind>(store: Store<K>) {
  const layerFile = pathToFileURL(resolve(config.stageDir, 'idempotency.ts')).href
  const { createLayer } = (await import(layerFile)) as { createLayer: CreateLayer<K> }
  return createApp(store, config, await createLayer({ ...store.layerContext, config }))
}

// LAB_SOCKET: a Unix socket instead of a port, for the grader's sandbox, which has no network.
const socket = process.env.LAB_SOCKET
const onListening = () => {
  const address = server.address()
  const where = socket ? `unix:${socket}` : `http://${config.host}:${typeof address === 'object' && address ? address.port : config.port}`
  console.log(`listening on ${where} (stage ${config.stageDir}, pid ${process.pid})`)
}
const http = createHttpServer(app)
const server = socket ? http.listen(socket, onListening) : http.listen(config.port, config.host, onListening)

function shutdown() {
  server.close(() => {
    store.close()
    process.exit(0)
  })
  server.closeIdleConnections()
  // In-flight requests get a moment to finish; then we go regardless.
  setTimeout(() => process.exit(0), 2_000).unref()
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)
