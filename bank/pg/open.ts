// Opens the bank in PostgreSQL mode (LAB_DATABASE_URL set): the pool, the
// schema, stage 6's layer and the app. main.ts imports this only in that mode,
// so the SQLite stages load none of it.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Config } from '../config.ts'
import { createPgApp } from './app.ts'
import { openPool } from './db.ts'
import type { CreatePgLayer } from './layer.ts'

export async function openPgBank(config: Config, url: string) {
  const pool = await openPool(url, config.poolMax)
  const layerFile = pathToFileURL(resolve(config.stageDir, 'idempotency.ts')).href
  const { createLayer } = (await import(layerFile)) as { createLayer: CreatePgLayer }
  const layer = await createLayer({ pool, config })
  return { app: createPgApp(pool, config, layer), close: () => void pool.end() }
}
