// Scenario: GET /health answers, every other request hangs forever: the check
// must time out, not the grader.
import { health, listen } from './lib/listen.ts'

listen((req, res) => {
  if (req.url === '/health') return health(res)
  // Never answer.
})
