// The network between the clients and the bank, with its faults made real.
// Every request of the replay goes through this HTTP proxy on 127.0.0.1; the
// replayer names the fault of an attempt in the X-Lab-Fault header, which the
// proxy removes before the server could see it:
//   drop-response  forward the request, wait until the server has answered in
//                  full (the transfer is done), then close the client's
//                  connection without a byte of the answer: the gateway gave up
//                  before the processing finished, as far as the client knows;
//   reset-before   reset the client's connection (TCP RST) before anything
//                  reaches the server.
// When the server dies with requests inside it, their connections are closed
// too. While the server restarts, new requests wait here, as behind a load
// balancer waiting for a healthy backend, and then go to the new port.
import { once } from 'node:events'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { COUNTED_FAULTS, type CountedFault, FAULT_TABLE, type FaultCounter, type ProxyFault } from '../logs/faults.ts'

export const FAULT_HEADER = 'x-lab-fault'

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', FAULT_HEADER])

function forwardable(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k)))
}

export class FaultProxy {
  url = ''
  /** How many times each fault was really applied; server-killed counts the connections the server's death cut. */
  readonly applied = Object.fromEntries(COUNTED_FAULTS.map((f) => [f, 0])) as Record<CountedFault, number>
  private upstream: Promise<URL>
  private resolveUpstream: ((url: URL) => void) | undefined
  private agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  private readonly server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => void this.handle(req, res))

  constructor(upstreamUrl: string) {
    this.upstream = Promise.resolve(new URL(upstreamUrl))
  }

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  /** The server is going down: hold new requests until `resume`. */
  pause(): void {
    if (this.resolveUpstream) return
    this.upstream = new Promise((resolve) => (this.resolveUpstream = resolve))
  }

  /** The server is back, possibly on another port. */
  resume(upstreamUrl: string): void {
    this.agent.destroy() // connections to the dead process are useless
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
    this.resolveUpstream?.(new URL(upstreamUrl))
    this.resolveUpstream = undefined
    this.upstream = Promise.resolve(new URL(upstreamUrl))
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    this.server.close()
    this.agent.destroy()
  }

  /** The applied counts under their names in the damage report (DamageReport.faults). */
  counts(): Record<FaultCounter, number> {
    const named = FAULT_TABLE.flatMap((row) => ('counter' in row ? [[row.counter, this.applied[row.fault]]] : []))
    return Object.fromEntries(named) as Record<FaultCounter, number>
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const fault = req.headers[FAULT_HEADER] as ProxyFault | undefined
    if (fault === 'reset-before') {
      this.applied['reset-before']++
      req.socket.resetAndDestroy()
      return
    }
    const target = await this.upstream
    const upstream = http.request({
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...forwardable(req.headers), host: target.host },
      agent: this.agent,
    })
    upstream.on('response', (answer) => {
      if (fault === 'drop-response') {
        // Read the whole answer (the server finished), then hang up on the client.
        answer.resume()
        answer.on('end', () => {
          this.applied['drop-response']++
          req.socket.destroy()
        })
        return
      }
      res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers))
      answer.pipe(res)
    })
    // The server died with this request inside it: the client's connection dies too.
    upstream.on('error', () => {
      this.applied['server-killed']++
      req.socket.destroy()
    })
    req.pipe(upstream)
  }
}
