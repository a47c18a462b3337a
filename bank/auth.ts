// Bearer tokens: the admin token for /admin, a per-client API key elsewhere.
// API keys are stored hashed, so a leaked database does not leak credentials.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { NextFunction, Request, Response } from 'express'
import type { Db } from './db.ts'
import { HttpProblem, problem } from './problem.ts'

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex')
export const newApiKey = () => `sk_${randomBytes(24).toString('hex')}`

function bearer(req: Request): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(req.get('authorization') ?? '')
  return match?.[1]
}

const unauthorized = (detail: string) => new HttpProblem(problem(401, 'unauthorized', 'Unauthorized', detail, { headers: { 'WWW-Authenticate': 'Bearer' } }))

export function requireAdmin(adminToken: string) {
  const expected = Buffer.from(hashApiKey(adminToken))
  return (req: Request, _res: Response, next: NextFunction) => {
    const token = bearer(req)
    if (!token || !timingSafeEqual(Buffer.from(hashApiKey(token)), expected)) throw unauthorized('This route needs the admin token.')
    next()
  }
}

export function requireClient(db: Db) {
  const findClient = db.prepare<[string], { id: string }>('SELECT id FROM clients WHERE api_key_hash = ?')
  return (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req)
    if (!token) throw unauthorized('Send your API key as "Authorization: Bearer <key>".')
    const client = findClient.get(hashApiKey(token))
    if (!client) throw unauthorized('That API key is not known.')
    res.locals.clientId = client.id
    next()
  }
}
