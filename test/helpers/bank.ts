// A real bank process for the contract tests, driven through the grader's own
// client (so the client is exercised too), plus the assertions those tests share.
import { randomBytes } from 'node:crypto'
import { join, resolve } from 'node:path'
import { expect } from 'vitest'
import { BankClient, type Customer, type Ledger } from '#harness/bankClient.ts'
import { HttpClient, type Exchange, type Reply } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import { ServerProcess } from '#harness/spawnServer.ts'

export const STAGE0_SOLUTION = resolve(repoRoot, 'solutions', '00-unprotected')

export type TestBank = { server: ServerProcess; bank: BankClient; adminToken: string }

let dbCount = 0

/** Starts bank/main.ts with the stage 0 layer (or `stageDir`'s) on a database file inside `dir`. */
export async function startBank(
  dir: string,
  opts: { dbPath?: string; adminToken?: string; env?: Record<string, string>; record?: (e: Exchange) => void; stageDir?: string } = {},
): Promise<TestBank> {
  const adminToken = opts.adminToken ?? `adm_${randomBytes(12).toString('hex')}`
  const server = new ServerProcess({
    stageDir: opts.stageDir ?? STAGE0_SOLUTION,
    dbPath: opts.dbPath ?? join(dir, `bank-${++dbCount}.sqlite`),
    adminToken,
    env: opts.env,
  })
  await server.start()
  return { server, bank: new BankClient(server, new HttpClient(opts.record ?? (() => {})), adminToken), adminToken }
}

/** A customer with accounts opened at the given balances. */
export async function customerWith(bank: BankClient, ...balances: number[]): Promise<{ customer: Customer; accounts: string[] }> {
  const customer = await bank.newCustomer(`test-${randomBytes(3).toString('hex')}`)
  const accounts: string[] = []
  for (const b of balances) accounts.push(await bank.openAccount(customer, b))
  return { customer, accounts }
}

/** An RFC 9457 problem with this status and type, as CONTRACT.md lists them. */
export function expectProblemReply(reply: Reply, status: number, type: string): void {
  const shown = `${reply.exchange.request.method} ${reply.exchange.request.url} -> HTTP ${reply.status} ${reply.text.slice(0, 300)}`
  expect(reply.status, shown).toBe(status)
  expect(reply.headers['content-type'], shown).toMatch(/^application\/problem\+json/)
  const body = reply.json
  expect(body, shown).toMatchObject({ type, status })
  expect(typeof body.title, shown).toBe('string')
  expect(typeof body.detail, shown).toBe('string')
}

/** Balances by account id: what "no balance changed" compares. */
export const balancesOf = (ledger: Ledger) => Object.fromEntries(ledger.accounts.map((a) => [a.id, a.balance]))
