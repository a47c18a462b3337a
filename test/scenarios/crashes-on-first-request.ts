// Scenario: GET /health answers, and the first real request crashes the
// process with an uncaught exception.
import { health, listen } from './lib/listen.ts'

listen((req, res) => {
  if (req.url === '/health') return health(res)
  throw new Error(`scenario crashes-on-first-request: crashed on ${req.method} ${req.url}`)
})
