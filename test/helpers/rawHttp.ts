// Bytes on a TCP socket, for requests no HTTP client will send: repeated or
// malformed header lines, bad bytes, CONNECT, the HTTP/2 preface. One request
// per connection (Connection: close); the answer is read until the server
// closes, then parsed just enough to assert on.
import { connect } from 'node:net'
import type { Exchange } from '#harness/http.ts'

export type RawReply = {
  status: number
  /** Lower-case names; a repeated header keeps its last value. */
  headers: Record<string, string>
  body: string
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body, as on Reply.json
  json: any
}

/** Sends `bytes` to 127.0.0.1:`port`; resolves undefined when the server closed without a byte of answer. */
export function sendRaw(port: number, bytes: string | Buffer, timeoutMs = 10_000): Promise<RawReply | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    const chunks: Buffer[] = []
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no end of answer within ${timeoutMs} ms to ${JSON.stringify(String(bytes).slice(0, 200))}`))
    }, timeoutMs)
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', () => undefined) // a reset after the answer is still an answer; "close" decides
    socket.on('close', () => {
      clearTimeout(timer)
      const all = Buffer.concat(chunks)
      resolve(all.length === 0 ? undefined : parseReply(all))
    })
    socket.write(bytes)
  })
}

function parseReply(all: Buffer): RawReply {
  // Interim answers (100 Continue to an Expect) come first; the final one is what counts.
  const text = all.toString('utf8').replace(/^(?:HTTP\/1\.1 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '')
  const split = text.indexOf('\r\n\r\n')
  const head = split < 0 ? text : text.slice(0, split)
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  let body = split < 0 ? '' : text.slice(split + 4)
  if (headers['content-length'] !== undefined) body = Buffer.from(body).subarray(0, Number(headers['content-length'])).toString('utf8')
  // biome-ignore lint/suspicious/noExplicitAny: a parsed JSON body, as on Reply.json
  let json: any
  try {
    json = JSON.parse(body)
  } catch {
    json = undefined
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN), headers, body, json }
}

/** The request line and header lines of a request, with Connection: close and a Content-Length for `body`. */
export function rawRequest(method: string, target: string, headerLines: string[], body: string | Buffer = ''): Buffer {
  const length = Buffer.byteLength(body)
  const head = [`${method} ${target} HTTP/1.1`, ...headerLines, 'Connection: close', ...(length > 0 ? [`Content-Length: ${length}`] : []), '', '']
  return Buffer.concat([Buffer.from(head.join('\r\n'), 'latin1'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8')])
}

/** A raw exchange in the grader's record format, so the CONTRACT.md test sees these answers too. */
export function asExchange(request: Buffer | string, reply: RawReply): Exchange {
  return {
    request: { method: 'RAW', url: '', headers: {}, body: String(request).slice(0, 500) },
    response: { status: reply.status, headers: reply.headers, body: reply.body },
    ms: 0,
  }
}
