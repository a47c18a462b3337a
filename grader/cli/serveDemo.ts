// What `npm run serve -- N --demo` sets up: a client with two funded accounts,
// and the curl lines of the course's story (a transfer, its retry, the ledger)
// with that client's real API key and account ids, ready to paste.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { request } from 'undici'
import type { Lang } from '#harness/i18n/language.ts'
import { serveLine } from './serveLines.ts'

export type Demo = { clientId: string; apiKey: string; accounts: [string, string]; balance: number; amount: number; key: string }

const OPENING_BALANCE = 1_000_000
const AMOUNT = 10_000

// biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body; the demo reads the fields it prints
async function call(url: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const res = await request(`${url}${path}`, {
    method: method as 'GET' | 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.body.text()
  if (res.statusCode >= 300) throw new Error(`${method} ${path} answered ${res.statusCode}: ${text}`)
  return JSON.parse(text)
}

/** Waits for the server (up to `waitMs`), then creates the client and its two accounts. */
export async function createDemo(url: string, adminToken: string, waitMs = 60_000): Promise<Demo> {
  const deadline = Date.now() + waitMs
  for (;;) {
    try {
      await call(url, 'GET', '/health', adminToken)
      break
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the server did not answer GET ${url}/health (${(error as Error).message})`)
      await sleep(200)
    }
  }
  const client = await call(url, 'POST', '/admin/clients', adminToken, { name: 'demo' })
  const open = async () => (await call(url, 'POST', '/accounts', client.apiKey, { balance: OPENING_BALANCE })).id as string
  const accounts: [string, string] = [await open(), await open()]
  return { clientId: client.id, apiKey: client.apiKey, accounts, balance: OPENING_BALANCE, amount: AMOUNT, key: randomUUID() }
}

/** POSIX shell quoting that leaves URLs readable (shell-quote escapes every ":"). */
const quote = (args: string[]) => args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ')

export function demoCurls(url: string, adminToken: string, d: Demo, lang: Lang = 'en'): string {
  const transfer = quote([
    'curl',
    '-si',
    '-X',
    'POST',
    `${url}/transfers`,
    '-H',
    `Authorization: Bearer ${d.apiKey}`,
    '-H',
    'Content-Type: application/json',
    '-H',
    `Idempotency-Key: "${d.key}"`,
    '-d',
    JSON.stringify({ from: d.accounts[0], to: d.accounts[1], amount: d.amount }),
  ])
  const ledger = quote(['curl', '-s', `${url}/admin/ledger`, '-H', `Authorization: Bearer ${adminToken}`])
  const won = (n: number) => `₩${n.toLocaleString('en')}`
  return [
    '',
    serveLine('demoClient', { client: d.clientId, apiKey: d.apiKey }).in(lang),
    serveLine('demoAccounts', { first: d.accounts[0], second: d.accounts[1], balance: won(d.balance) }).in(lang),
    '',
    serveLine('demoTransfer', { amount: won(d.amount) }).in(lang),
    transfer,
    serveLine('demoRetry').in(lang),
    transfer,
    serveLine('demoLedger').in(lang),
    ledger,
    '',
  ].join('\n')
}
