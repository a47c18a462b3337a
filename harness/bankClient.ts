// The bank's contract (CONTRACT.md) as the grader uses it. Each BankClient
// talks to one server process; checks use it instead of raw HTTP.
import { setTimeout as sleep } from 'node:timers/promises'
import type { HttpClient, Reply, RequestSpec } from './http.ts'
import type { ServerProcess } from './spawnServer.ts'
import { CheckFailure } from './failure.ts'
import { type Line, phrases } from './i18n/phrase.ts'

// What this module tells a learner, as templates the packs translate (i18n/<lang>.json, "messages": bankClient.<key>).
const say = phrases('bankClient', {
  failedExpected: '{what} failed: expected HTTP {status}',
  creatingClient: 'Creating a client',
  openingAccount: 'Opening an account',
  readingLedger: 'Reading the ledger',
  settingCore: 'Setting the core simulator',
  readingCore: 'Reading the core simulator',
  reachCore: 'expected {n} request(s) to reach the core within {timeoutMs} ms, saw {inflight}',
  accountMissing: 'account {account} is missing from the ledger',
})

export type Customer = { id: string; name: string; apiKey: string }
export type LedgerEntry = { id: string; kind: string; clientId: string; from: string | null; to: string; amount: number; createdAt: string }
export type Ledger = {
  accounts: Array<{ id: string; clientId: string; balance: number; openedWith: number }>
  entries: LedgerEntry[]
}
export type CoreSettings = {
  delayMs?: number
  hold?: boolean
  /** The next this-many calls are each held alone, under a number listed in `held`, until `letGo` names it (`hold: false` lets them all go). */
  holdNext?: number
  letGo?: { call: number; fails: boolean }
  failNext?: number
  /** The next money-moving request whose transaction commits kills the server (SIGKILL) before it answers. */
  crashAfterCommit?: boolean
}
export type TransferBody = { from: string; to: string; amount: number; memo?: string; metadata?: Record<string, unknown> }

export type SendOptions = {
  key?: string
  /** Send this text instead of JSON.stringify(body): how a client's library serialized it. */
  raw?: string
  headers?: Record<string, string>
}

export class BankClient {
  constructor(
    readonly server: ServerProcess,
    readonly http: HttpClient,
    readonly adminToken: string,
  ) {}

  get url() {
    return this.server.url
  }

  send(spec: RequestSpec): Promise<Reply> {
    return this.http.send(this.server.endpoint, spec)
  }

  private admin(spec: RequestSpec) {
    return this.send({ ...spec, headers: { Authorization: `Bearer ${this.adminToken}`, ...spec.headers } })
  }

  /** Sends and insists on a status: for setup steps whose failure is not what the check is about. */
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body; each caller names the fields it reads
  private async expectOk(reply: Promise<Reply>, status: number, what: Line): Promise<any> {
    const r = await reply
    if (r.status !== status) throw new CheckFailure(say('failedExpected', { what, status }), { exchange: r.exchange })
    return r.json
  }

  async newCustomer(name: string): Promise<Customer> {
    const c = await this.expectOk(this.admin({ path: '/admin/clients', body: { name } }), 201, say('creatingClient'))
    return { id: c.id, name, apiKey: c.apiKey }
  }

  async openAccount(customer: Customer, balance: number): Promise<string> {
    const a = await this.expectOk(this.as(customer, { path: '/accounts', body: { balance } }), 201, say('openingAccount'))
    return a.id
  }

  as(customer: Customer, spec: RequestSpec): Promise<Reply> {
    return this.send({ ...spec, headers: { Authorization: `Bearer ${customer.apiKey}`, ...spec.headers } })
  }

  /** The spec of a money-moving POST, so bursts can send many at once. */
  postSpec(customer: Customer, path: string, body: unknown, opts: SendOptions = {}): RequestSpec {
    return {
      method: 'POST',
      path,
      body: opts.raw ?? body,
      headers: {
        Authorization: `Bearer ${customer.apiKey}`,
        ...(opts.key !== undefined ? { 'Idempotency-Key': opts.key } : {}),
        ...opts.headers,
      },
    }
  }

  transfer(customer: Customer, body: TransferBody, opts: SendOptions = {}): Promise<Reply> {
    return this.send(this.postSpec(customer, '/transfers', body, opts))
  }

  deposit(customer: Customer, body: { to: string; amount: number }, opts: SendOptions = {}): Promise<Reply> {
    return this.send(this.postSpec(customer, '/deposits', body, opts))
  }

  /** `onReply` sees each answer as it arrives (the burst resolves when all have). */
  burst(specs: RequestSpec[], onReply?: (reply: Reply) => void): Promise<Reply[]> {
    return this.http.burst(this.server.endpoint, specs, onReply)
  }

  /**
   * The whole bank's ledger, or only `of` these customers' accounts and the
   * entries they made (asked of the server, and filtered here too: a server
   * that ignores the query still gives the same answer).
   */
  async ledger(of?: Customer[]): Promise<Ledger> {
    if (!of) return this.expectOk(this.admin({ path: '/admin/ledger' }), 200, say('readingLedger'))
    const ids = new Set(of.map((c) => c.id))
    const query = of.map((c) => `client=${encodeURIComponent(c.id)}`).join('&')
    const ledger: Ledger = await this.expectOk(this.admin({ path: `/admin/ledger?${query}` }), 200, say('readingLedger'))
    return { accounts: ledger.accounts.filter((a) => ids.has(a.clientId)), entries: ledger.entries.filter((e) => ids.has(e.clientId)) }
  }

  core(change: CoreSettings): Promise<CoreSettings & { inflight: number; held?: number[] }> {
    return this.expectOk(this.admin({ method: 'PUT', path: '/admin/core', body: change }), 200, say('settingCore'))
  }

  /** Waits until `n` calls are held inside the core: proof they got past the layer's claim. */
  async waitForInflight(n: number, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const state = await this.expectOk(this.admin({ path: '/admin/core' }), 200, say('readingCore'))
      if (state.inflight >= n) return
      if (Date.now() > deadline) throw new CheckFailure(say('reachCore', { n, timeoutMs, inflight: state.inflight }))
      await sleep(25)
    }
  }

  async balance(accountId: string): Promise<number> {
    const l = await this.ledger()
    const account = l.accounts.find((a) => a.id === accountId)
    if (!account) throw new CheckFailure(say('accountMissing', { account: accountId }))
    return account.balance
  }
}
