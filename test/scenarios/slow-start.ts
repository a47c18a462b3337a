// Scenario: the real bank, slow to start (a loaded laptop, tsx compiling in a
// roster batch): alive the whole time, it listens only after 6 s. The grader
// must wait for it, not call it broken, and say how long it took.
import { setTimeout as sleep } from 'node:timers/promises'

export const SLOW_START_MS = 6_000
console.log(`scenario slow-start: pid ${process.pid}, listening in ${SLOW_START_MS} ms`)
await sleep(SLOW_START_MS)
await import('#bank/main.ts')
