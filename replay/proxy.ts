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
// It is also the load balancer: with several upstreams (stage 6's instances
// on one database) request i goes to upstream i mod n, round-robin, skipping
// those taken out of rotation; with one, every request goes to it.
// When a server dies with requests inside it, their connections are closed
// too. An upstream taken out of rotation (a crashed server restarting) gets
// no new requests; while none is in rotation, new requests wait here, as
// behind a load balancer waiting for a healthy backend, and then go to the
// upstream put back, on its new port.
import { once } from 'node:events'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { COUNTED_FAULTS, type CountedFault, FAULT_TABLE, type FaultCounter, type ProxyFault } from '../logs/faults.ts'

export const FAULT_HEADER = 'x-lab-fault'

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection', FAULT_HEADER])

function forwardable(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k)))
}

/** A server behind the proxy, with its own connections (a dead process's are dropped with it). */
type Upstream = { url: URL; agent: http.Agent; inRotation: boolean }

/**
 * A fresh connection to the bank for every request. With keep-alive, an
 * instance left idle through a restart closes its pooled connections (Node's
 * 5 s keepAliveTimeout) just as the proxy reuses one: the request dies with
 * ECONNRESET although no server died, and a client is cut off for nothing (a
 * CI run lost a plain transfer the bank never saw). Loopback connections are cheap.
 */
const newAgent = () => new http.Agent({ keepAlive: false, maxSockets: 64 })

export class FaultProxy {
  url = ''
  /** How many times each fault was really applied; server-killed counts the connections the server's death cut. */
  readonly applied = Object.fromEntries(COUNTED_FAULTS.map((f) => [f, 0])) as Record<CountedFault, number>
  /** Requests forwarded to each upstream, by its place in the list. */
  readonly forwarded: number[]
  private readonly upstreams: Upstream[]
  /** The place the next request tries first. */
  private next = 0
  /** Requests waiting for an upstream to be put back. */
  private waiting: Array<() => void> = []
  private readonly server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => void this.handle(req, res))

  constructor(upstreamUrls: string[]) {
    this.upstreams = upstreamUrls.map((url) => ({ url: new URL(url), agent: newAgent(), inRotation: true }))
    this.forwarded = upstreamUrls.map(() => 0)
  }

  async start(): Promise<void> {
    this.server.listen(0, '127.0.0.1')
    await once(this.server, 'listening')
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  /** Upstream `place` is going down: no new request goes to it until `putBack`. */
  takeOut(place: number): void {
    this.upstreams[place]!.inRotation = false
  }

  /** Upstream `place` is back, possibly on another port: it rejoins the rotation, and waiting requests go out. */
  putBack(place: number, upstreamUrl: string): void {
    this.upstreams[place]!.agent.destroy() // connections to the dead process are useless
    this.upstreams[place] = { url: new URL(upstreamUrl), agent: newAgent(), inRotation: true }
    for (const go of this.waiting.splice(0)) go()
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    this.server.close()
    for (const upstream of this.upstreams) upstream.agent.destroy()
  }

  /** The applied counts under their names in the damage report (DamageReport.faults). */
  counts(): Record<FaultCounter, number> {
    const named = FAULT_TABLE.flatMap((row) => ('counter' in row ? [[row.counter, this.applied[row.fault]]] : []))
    return Object.fromEntries(named) as Record<FaultCounter, number>
  }

  /** The next upstream in rotation, round-robin; waits while none is. */
  private async pick(): Promise<Upstream> {
    for (;;) {
      const n = this.upstreams.length
      for (let k = 0; k < n; k++) {
        const place = (this.next + k) % n
        const upstream = this.upstreams[place]!
        if (!upstream.inRotation) continue
        this.next = (place + 1) % n
        this.forwarded[place]!++
        return upstream
      }
      await new Promise<void>((go) => this.waiting.push(go))
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const fault = req.headers[FAULT_HEADER] as ProxyFault | undefined
    if (fault === 'reset-before') {
      this.applied['reset-before']++
      req.socket.resetAndDestroy()
      return
    }
    const { url: target, agent } = await this.pick()
    const upstream = http.request({
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: { ...forwardable(req.headers), host: target.host },
      agent,
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
