// The Node HTTP server around the Express app. Some requests never reach
// Express: Node's parser refuses them (a control character in a header,
// Content-Length together with Transfer-Encoding, a header section over
// 16 KB…), or Node answers them itself (an Expect it does not know, CONNECT,
// an HTTP/1.1 request without Host). Wherever Node lets the server choose the
// answer, it is a problem+json like every other error. CONTRACT.md lists the
// cases Node keeps to itself.
import { createServer, STATUS_CODES, type RequestListener, type Server } from 'node:http'
import type { Duplex } from 'node:stream'
import { problem, writeOutcome, type Outcome } from './problem.ts'

/** Far above what a whole request takes over loopback or a LAN, even on a loaded machine. */
const REQUEST_TIMEOUT_MS = 15_000
/** How often Node looks for requests past their time: a late one is answered at most this much after it. */
const REQUEST_TIMEOUT_CHECK_MS = 3_000

/** The status Node itself would send for a parser error, with our problem type. */
function parserProblem(code: string | undefined): Outcome {
  if (code === 'HPE_HEADER_OVERFLOW')
    return problem(431, 'headers-too-large', 'Request header fields too large', 'The header section is larger than the server accepts.')
  if (code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW')
    return problem(413, 'body-too-large', 'Body too large', 'The chunk extensions are larger than the server accepts.')
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return problem(408, 'request-timeout', 'Request timeout', 'The request was not received in time.')
  return problem(400, 'bad-request', 'Bad request', `The request is not valid HTTP/1.1 (${code ?? 'parse error'}).`)
}

/** A whole response written straight to the socket, which is then closed: the connection cannot be trusted after a bad request. */
function answerOnSocket(socket: Duplex, outcome: Outcome): void {
  const head = [
    `HTTP/1.1 ${outcome.status} ${STATUS_CODES[outcome.status]}`,
    ...Object.entries(outcome.headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(outcome.body)}`,
    'Connection: close',
  ]
  socket.end(`${head.join('\r\n')}\r\n\r\n${outcome.body}`, () => socket.destroy())
}

export function createHttpServer(app: RequestListener): Server {
  // Node's Host check answers a bare 400; the app makes the same check and answers a problem (app.ts).
  // A request must arrive whole within REQUEST_TIMEOUT_MS, not Node's 300 s:
  // a chunk that announces 2^64 bytes and sends none would hold its
  // connection (and the body parser) that long. Only receiving is timed: a
  // request that waits in the core has arrived, and waits as long as it must.
  const server = createServer({ requireHostHeader: false, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: REQUEST_TIMEOUT_CHECK_MS }, app)

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    // Only where nothing of a response has been written yet (Node's own rule):
    // otherwise our bytes would corrupt the response under way.
    if (err.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) return void socket.destroy()
    answerOnSocket(socket, parserProblem(err.code))
  })

  // Any Expect other than 100-continue (which Node answers with 100 and passes on).
  server.on('checkExpectation', (req, res) =>
    writeOutcome(
      res,
      problem(417, 'expectation-failed', 'Expectation failed', `The server cannot meet Expect: ${req.headers.expect}.`, { headers: { Connection: 'close' } }),
    ),
  )

  // Without a listener Node drops a CONNECT without a word. The bank is not a proxy.
  server.on('connect', (req, socket: Duplex) =>
    answerOnSocket(socket, problem(404, 'not-found', 'Not found', `No route CONNECT ${req.url}: the bank is not a proxy.`)),
  )
  return server
}
