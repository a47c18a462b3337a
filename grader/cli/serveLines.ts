// What npm run serve tells the learner (grader/cli/serve.ts, serveDemo.ts), as
// templates the packs translate (i18n/<lang>.json, "messages": serve.<key>).
// Its own module, without a main, so that the phrasebook (grader/phrasebook.ts)
// registers them for i18n:status. The curl lines and the bank's log are evidence.
import { phrases } from '#harness/i18n/phrase.ts'

export const serveLine = phrases('serve', {
  oneStage: 'unexpected argument {argument}: serve takes one stage',
  clockToken: '--clock: the bank moves its clock only for an admin token of adm_ and 32 hex digits; LAB_ADMIN_TOKEN is not one (leave it unset for a new one)',
  clockValue: '--clock {text}: milliseconds since the epoch, a whole number from 0 to {latest}',
  adminToken: '  admin token: {token}',
  database: '  database:    {file}',
  clockStands: '  clock:       stands at {ms} ({iso}) until PUT /admin/clock moves it',
  shellClockIgnored: "  LAB_CLOCK_NOW_MS={ms} ignored: a served bank runs on the host's clock, or on --clock's",
  demoFailed: '--demo: {error}',
  demoClient: 'demo: client {client} (API key {apiKey})',
  demoAccounts: '      accounts {first} and {second}, {balance} each',
  demoTransfer: '# 1. a transfer of {amount}, with an Idempotency-Key',
  demoRetry: '# 2. its retry: the very same line, as a client that lost the answer sends it',
  demoLedger: '# 3. the ledger: how many times did the money move?',
})
