// One line per request, for `npm run serve` (LAB_REQUEST_LOG=1): what a
// learner trying the bank with curl wants to see scroll by. Off by default, so
// the grader's servers keep their logs for what goes wrong.
import type { NextFunction, Request, Response } from 'express'

export function requestLog(env: NodeJS.ProcessEnv = process.env) {
  const on = env.LAB_REQUEST_LOG === '1'
  return (req: Request, res: Response, next: NextFunction) => {
    if (!on) return next()
    const started = performance.now()
    res.once('finish', () => {
      const key = req.get('idempotency-key')
      const ms = (performance.now() - started).toFixed(1)
      console.log(
        `${new Date().toISOString().slice(11, 23)} ${req.method} ${req.originalUrl} → ${res.statusCode} ${ms} ms${key === undefined ? '' : ` key ${key}`}`,
      )
    })
    next()
  }
}
