// The grader's HTTP client. Every request is recorded as an Exchange, so a
// failure can show exactly what was sent (as a curl command) and what came back.
import { Client, request, type Dispatcher } from 'undici'

export type SentRequest = {
  method: string
  url: string
  /** Sent over this Unix socket (a sandboxed server has no network). */
  socketPath?: string
  headers: Record<string, string>
  body?: string
}

export type Exchange = {
  request: SentRequest
  response?: { status: number; headers: Record<string, string>; body: string }
  error?: string
  ms: number
}

export class Reply {
  constructor(readonly exchange: Exchange & { response: NonNullable<Exchange['response']> }) {}
  get status() {
    return this.exchange.response.status
  }
  get headers() {
    return this.exchange.response.headers
  }
  get text() {
    return this.exchange.response.body
  }
  /** The body parsed as JSON, or undefined when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body: checks read whatever fields they test
  get json(): any {
    try {
      return JSON.parse(this.text)
    } catch {
      return undefined
    }
  }
}

export type RequestSpec = {
  method?: string
  path: string
  headers?: Record<string, string>
  /** An object is sent as JSON; a string is sent as is (with a JSON content type). */
  body?: unknown
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v
  return out
}

/** A server's address: a URL, or a URL spoken over a Unix socket (with the agent that does so). */
export type Endpoint = string | { url: string; socketPath: string; agent: Dispatcher }

const urlOf = (to: Endpoint) => (typeof to === 'string' ? to : to.url)
const socketOf = (to: Endpoint) => (typeof to === 'string' ? undefined : to.socketPath)

export class HttpClient {
  /** Requests sent and not yet answered, oldest first: what a timed-out check was waiting for. */
  readonly pending = new Set<Exchange>()

  constructor(
    private readonly record: (e: Exchange) => void,
    private readonly signal?: AbortSignal,
  ) {}

  async send(to: Endpoint, spec: RequestSpec, dispatcher = typeof to === 'string' ? undefined : to.agent): Promise<Reply> {
    const body = spec.body === undefined ? undefined : typeof spec.body === 'string' ? spec.body : JSON.stringify(spec.body)
    const headers: Record<string, string> = {
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...spec.headers,
    }
    const method = spec.method ?? (body === undefined ? 'GET' : 'POST')
    const sent: SentRequest = { method, url: urlOf(to) + spec.path, socketPath: socketOf(to), headers, body }
    const started = performance.now()
    const exchange: Exchange = { request: sent, ms: 0 }
    this.pending.add(exchange)
    try {
      const res = await request(sent.url, {
        method: sent.method as Dispatcher.HttpMethod,
        headers,
        body,
        dispatcher,
        signal: this.signal,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      })
      exchange.response = { status: res.statusCode, headers: flatten(res.headers), body: await res.body.text() }
      return new Reply(exchange as Reply['exchange'])
    } catch (error) {
      exchange.error = (error as Error).message
      throw Object.assign(error as Error, { exchange })
    } finally {
      this.pending.delete(exchange)
      exchange.ms = Math.round(performance.now() - started)
      this.record(exchange)
    }
  }

  /**
   * Sends every spec at the same instant, each on its own connection: the
   * connections are opened and warmed first, then all requests are written in
   * one synchronous loop (a barrier, not a loop of awaits).
   */
  async burst(to: Endpoint, specs: RequestSpec[], onReply?: (reply: Reply) => void): Promise<Reply[]> {
    const clients = specs.map(() => new Client(urlOf(to), { pipelining: 1, socketPath: socketOf(to) }))
    try {
      await Promise.all(clients.map((c) => c.request({ method: 'GET', path: '/health' }).then((r) => r.body.text())))
      return await Promise.all(
        specs.map((spec, i) =>
          this.send(to, spec, clients[i]).then((reply) => {
            onReply?.(reply)
            return reply
          }),
        ),
      )
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)))
    }
  }
}

/** A copy-pasteable command that sends the same bytes. */
export function toCurl(req: SentRequest): string {
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
  const parts = ['curl -sS -i', ...(req.socketPath ? [`--unix-socket ${q(req.socketPath)}`] : []), `-X ${req.method}`, q(req.url)]
  for (const [k, v] of Object.entries(req.headers)) parts.push(`-H ${q(`${k}: ${v}`)}`)
  if (req.body !== undefined) parts.push(`--data-raw ${q(req.body.length > 2_000 ? `${req.body.slice(0, 2_000)}…` : req.body)}`)
  return parts.join(' ')
}

export function describeResponse(e: Exchange): string {
  if (!e.response) return `no response (${e.error ?? 'unknown error'})`
  const r = e.response
  const shown = ['content-type', 'retry-after', 'idempotent-replayed', 'location'].filter((h) => r.headers[h] !== undefined).map((h) => `${h}: ${r.headers[h]}`)
  const body = r.body.length > 600 ? `${r.body.slice(0, 600)}…` : r.body
  return [`HTTP ${r.status}`, ...shown, body].join('\n')
}
