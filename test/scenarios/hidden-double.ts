// Scenario: the real bank, with a layer that executes every transfer twice and
// answers with the first response, so only the ledger and balances show it.
import { fileURLToPath } from 'node:url'

process.env.LAB_STAGE_DIR = fileURLToPath(new URL('./layers/hidden-double/', import.meta.url))
await import('#bank/main.ts')
