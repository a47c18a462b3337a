// The day's logical names made real: the replayer creates one API client per
// client of the log (through the admin API) and opens every account the log
// mentions, then rewrites each body's account names into real account ids.
import pLimit from 'p-limit'
import type { BankClient, Customer } from '#harness/bankClient.ts'
import { PROFILES } from '../logs/clients.ts'
import { expectOf } from '../logs/faults.ts'
import { CLIENTS, type AttemptLine, type ClientName } from '../logs/format.ts'
import { LOW_BALANCE } from '../logs/intents.ts'

/**
 * Every account opens with this much, so that no duplicate on an unprotected
 * stage can ever make a later transfer fail for funds: the only 402s of the
 * day are the planned ones, on accounts that open with LOW_BALANCE.
 */
export const OPENING_BALANCE = 100_000_000_000

const ACCOUNT = new RegExp(
  `"((?:${Object.values(PROFILES)
    .map((p) => p.accountPrefix)
    .join('|')})-(?:low-)?\\d+)"`,
  'g',
)

export type World = {
  customers: Map<ClientName, Customer>
  /** Logical account name (mob-017) to real account id (acc_…), and back. */
  accountId: Map<string, string>
  accountName: Map<string, string>
  clientName: Map<string, ClientName>
}

/** Which accounts the day uses, who owns each, and which ones must be nearly empty. */
export function accountsOf(lines: AttemptLine[]): Map<string, { owner: ClientName; opening: number }> {
  const owners = new Map(CLIENTS.map((c) => [PROFILES[c].accountPrefix, c]))
  const accounts = new Map<string, { owner: ClientName; opening: number }>()
  for (const line of lines)
    for (const [, name] of line.body.matchAll(ACCOUNT)) {
      if (!accounts.has(name!)) accounts.set(name!, { owner: owners.get(name!.split('-')[0]!)!, opening: OPENING_BALANCE })
    }
  for (const line of lines) {
    if (expectOf(line.kind) !== 'insufficient-funds') continue
    const from = (JSON.parse(line.body) as { from: string }).from
    accounts.get(from)!.opening = LOW_BALANCE
  }
  return accounts
}

export async function buildWorld(bank: BankClient, lines: AttemptLine[]): Promise<World> {
  const customers = new Map<ClientName, Customer>()
  for (const name of CLIENTS) customers.set(name, await bank.newCustomer(name))
  const accountId = new Map<string, string>()
  const limit = pLimit(8)
  await Promise.all(
    [...accountsOf(lines)].map(([name, { owner, opening }]) => limit(async () => accountId.set(name, await bank.openAccount(customers.get(owner)!, opening)))),
  )
  const clientName = new Map([...customers].map(([name, c]) => [c.id, name]))
  return { customers, accountId, accountName: new Map([...accountId].map(([k, v]) => [v, k])), clientName }
}

/** The body as the client's library wrote it, with real account ids in place of the logical names. */
export function realBody(world: World, body: string): string {
  return body.replace(ACCOUNT, (_, name: string) => `"${world.accountId.get(name) ?? name}"`)
}
