// Starts the bank with one stage's idempotency layer:
//   LAB_STAGE_DIR=stages/01-unique-key tsx bank/main.ts
// The bank itself is run.ts; this file only finds the layer. (The grader
// starts the same run.ts from a bundle of the bank and the stage's folder,
// which starts in a fraction of the time tsx takes: harness/serverBuild.ts.)
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadConfig } from './config.ts'
import type { CreateLayer, StoreKind } from './layer.ts'
import { runBank } from './run.ts'

const layerFile = pathToFileURL(resolve(loadConfig().stageDir, 'idempotency.ts')).href
const { createLayer } = (await import(layerFile)) as { createLayer: CreateLayer<StoreKind> }
await runBank(createLayer)
