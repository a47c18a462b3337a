// Scenario: the real bank, with a layer that reports a wrong balanceAfter.
import { fileURLToPath } from 'node:url'

process.env.LAB_STAGE_DIR = fileURLToPath(new URL('./layers/tampered-balance/', import.meta.url))
await import('#bank/main.ts')
