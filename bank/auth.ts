// Bearer tokens: the admin token for /admin, a per-client API key elsewhere.
// API keys are stored hashed, so a leaked database does not leak credentials.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { NextFunction, Request, Response } from 'express'
import { HttpProblem, problem } from './problem.ts'

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex')
export const newApiKey = () => `sk_${randomBytes(24).toString('hex')}`

/** The admin token of a bank nobody configured: fine on your own machine, refused on any other address (run.ts). */
export const DEFAULT_ADMIN_TOKEN = 'admin-secret-change-me'

/**
 * The admin token the grader makes for each grade (128 random bits). Only a
 * bank started with one lets its clock be moved (LAB_CLOCK_NOW_MS): the
 * grader's token is its proof that the grader started it, so a bank someone
 * runs by hand, or with the default token, keeps the host's clock.
 */
export const newGraderToken = () => `adm_${randomBytes(16).toString('hex')}`
export const isGraderToken = (token: string) => /^adm_[0-9a-f]{32}$/.test(token)

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

/** `findClient`: the client whose API key hashes to this (the store's lookup). */
export function requireClient(findClient: (apiKeyHash: string) => Promise<string | undefined>) {
  return async (req: Request, res: Response, next: NextFunction) => {
    const token = bearer(req)
    if (!token) throw unauthorized('Send your API key as "Authorization: Bearer <key>".')
    const clientId = await findClient(hashApiKey(token))
    if (!clientId) throw unauthorized('That API key is not known.')
    res.locals.clientId = clientId
    next()
  }
}
