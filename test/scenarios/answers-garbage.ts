// Scenario: GET /health answers, everything else gets 200 and an HTML page.
import { health, listen } from './lib/listen.ts'

listen((req, res) => {
  if (req.url === '/health') return health(res)
  req.resume()
  res.writeHead(200, { 'Content-Type': 'text/html' })
  res.end('<html><body>It works!</body></html>')
})
