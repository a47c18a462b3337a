// A bare HTTP server for scenario programs: binds where the grader says
// (LAB_HOST, LAB_PORT=0) and prints the line the grader waits for, exactly as
// bank/main.ts does. What it answers is up to each scenario.
import { createServer, type RequestListener } from 'node:http'

export function listen(handler: RequestListener) {
  const server = createServer(handler)
  server.listen(Number(process.env.LAB_PORT ?? 0), process.env.LAB_HOST ?? '127.0.0.1', () => {
    const address = server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    console.log(`listening on http://127.0.0.1:${port} (scenario, pid ${process.pid})`)
  })
  return server
}

/** GET /health as the contract has it; everything else is the scenario's business. */
export function health(res: Parameters<RequestListener>[1]) {
  res.writeHead(200, { 'Content-Type': 'application/json' })
  res.end(JSON.stringify({ status: 'ok', pid: process.pid }))
}
