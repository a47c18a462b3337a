// Sends attempts through the fault proxy, with the grader's HTTP client (so
// every attempt is an Exchange that can be shown as a curl command).
import { Client, Pool } from 'undici'
import { HttpClient, type Exchange, type RequestSpec } from '#harness/http.ts'

export class Sender {
  private readonly http = new HttpClient(() => undefined)
  private readonly pool: Pool

  constructor(
    readonly url: string,
    connections: number,
  ) {
    this.pool = new Pool(url, { connections, pipelining: 1 })
  }

  /** The exchange, whether an answer came back or the connection failed. */
  async send(spec: RequestSpec): Promise<Exchange> {
    try {
      return (await this.http.send(this.url, spec, this.pool)).exchange
    } catch (error) {
      const exchange = (error as { exchange?: Exchange }).exchange
      if (!exchange) throw error
      return exchange
    }
  }

  /**
   * All at the same instant, each on its own connection: the connections are
   * opened and warmed first, then every request is written in one synchronous
   * loop (the barrier of harness/http.ts, keeping each exchange even if another fails).
   */
  async burst(specs: RequestSpec[]): Promise<Exchange[]> {
    const clients = specs.map(() => new Client(this.url, { pipelining: 1 }))
    try {
      await Promise.all(clients.map((c) => c.request({ method: 'GET', path: '/health' }).then((r) => r.body.text())))
      return await Promise.all(
        specs.map((spec, i) =>
          this.http.send(this.url, spec, clients[i]).then(
            (reply) => reply.exchange,
            (error: { exchange: Exchange }) => error.exchange,
          ),
        ),
      )
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)))
    }
  }

  async close(): Promise<void> {
    await this.pool.close()
  }
}
