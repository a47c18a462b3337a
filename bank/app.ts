// The bank's HTTP surface. The contract is CONTRACT.md; this file wires it up.
// Money-moving POSTs go through the stage's idempotency layer (see layer.ts).
import { randomUUID } from 'node:crypto'
import express, { type NextFunction, type Request, type Response } from 'express'
import type { z } from 'zod'
import { hashApiKey, newApiKey, requireAdmin, requireClient } from './auth.ts'
import type { Config } from './config.ts'
import { clockAdmin } from './clockAdmin.ts'
import { CoreBanking } from './core.ts'
import type { Db } from './db.ts'
import type { Layer, Operation } from './layer.ts'
import { createMoney } from './money.ts'
import { jsonBody, type RawRequest } from './body.ts'
import { repeatedKeyProblem } from './keyLines.ts'
import { HttpProblem, jsonOutcome, problem, writeOutcome as send, type Outcome } from './problem.ts'
import { requestLog } from './requestLog.ts'
import { CoreUpdate, DepositBody, NewAccount, NewClient, TransferBody } from './schemas.ts'
import { storableParam } from './storableText.ts'

export function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const result = schema.safeParse(body)
  if (result.success) return result.data
  const errors = result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }))
  throw new HttpProblem(
    problem(400, 'invalid-body', 'Invalid request body', errors.map((e) => `${e.path || 'body'}: ${e.message}`).join('; '), {
      members: { errors },
    }),
  )
}

// HTTP/1.1 requires Host (RFC 9112 §3.2); Node's own check would answer it
// without a problem body, so the server turns that check off (httpServer.ts) and this one answers.
export function requireHost(req: Request, _res: Response, next: NextFunction) {
  if (req.httpVersion === '1.1' && req.headers.host === undefined)
    throw new HttpProblem(problem(400, 'bad-request', 'Bad request', 'An HTTP/1.1 request needs a Host header.'))
  next()
}

/**
 * The request's headers for Operation.headers: as Node received them (names in
 * lower case, repeated lines joined as Node joins them; a repeated Set-Cookie,
 * which Node keeps as a list, joined with ", "), frozen.
 */
export function operationHeaders(req: Request): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  return Object.freeze(headers)
}

export function createApp(db: Db, config: Config, layer: Layer) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(requestLog())
  const core = new CoreBanking(config.processingDelayMs)
  const money = createMoney(db)
  const client = requireClient(db)
  const admin = requireAdmin(config.adminToken)

  app.use(requireHost)
  app.use(jsonBody(config.bodyLimit))
  app.param('id', storableParam)

  app.get('/health', (_req, res) => send(res, jsonOutcome(200, { status: 'ok', pid: process.pid })))

  // ---- admin ----------------------------------------------------------------
  app.post('/admin/clients', admin, (req, res) => {
    const { name } = parse(NewClient, req.body)
    const id = `cl_${randomUUID()}`
    const apiKey = newApiKey()
    db.prepare('INSERT INTO clients (id, name, api_key_hash, created_at) VALUES (?, ?, ?, ?)').run(id, name, hashApiKey(apiKey), new Date().toISOString())
    send(res, jsonOutcome(201, { id, name, apiKey }))
  })

  app.get('/admin/ledger', admin, (_req, res) => {
    const read = db.transaction(() => ({
      accounts: db.prepare('SELECT id, client_id AS clientId, balance, opened_with AS openedWith FROM accounts ORDER BY rowid').all(),
      entries: db
        .prepare(
          `SELECT id, kind, client_id AS clientId, from_account AS "from", to_account AS "to", amount, created_at AS createdAt
           FROM ledger ORDER BY seq`,
        )
        .all(),
    }))
    send(res, jsonOutcome(200, read()))
  })

  app.get('/admin/core', admin, (_req, res) => send(res, jsonOutcome(200, core.state())))
  app.put('/admin/core', admin, (req, res) => send(res, jsonOutcome(200, core.update(parse(CoreUpdate, req.body)))))
  clockAdmin(app, admin, parse)

  // ---- clients --------------------------------------------------------------
  app.post('/accounts', client, (req, res) => {
    const { balance } = parse(NewAccount, req.body)
    const id = `acc_${randomUUID()}`
    db.prepare('INSERT INTO accounts (id, client_id, balance, opened_with, created_at) VALUES (?, ?, ?, ?, ?)').run(
      id,
      res.locals.clientId,
      balance,
      balance,
      new Date().toISOString(),
    )
    send(res, jsonOutcome(201, { id, balance }, { Location: `/accounts/${id}` }))
  })

  app.get('/accounts/:id', client, (req, res) => {
    const account = db
      .prepare<[string], { id: string; clientId: string; balance: number }>('SELECT id, client_id AS clientId, balance FROM accounts WHERE id = ?')
      .get(String(req.params.id))
    if (!account) throw new HttpProblem(problem(404, 'account-not-found', 'Account not found', `There is no account ${req.params.id}.`))
    if (account.clientId !== res.locals.clientId)
      throw new HttpProblem(problem(403, 'not-account-owner', 'Not your account', `Account ${account.id} belongs to another client.`))
    send(res, jsonOutcome(200, { id: account.id, balance: account.balance }))
  })

  for (const kind of ['transfer', 'deposit'] as const) {
    app.get(`/${kind}s/:id`, client, (req, res) => {
      const entry = db
        .prepare(
          `SELECT id, from_account AS "from", to_account AS "to", amount, created_at AS createdAt
           FROM ledger WHERE id = ? AND kind = ? AND client_id = ?`,
        )
        .get(String(req.params.id), kind, res.locals.clientId)
      if (!entry) throw new HttpProblem(problem(404, `${kind}-not-found`, 'Not found', `You have no ${kind} ${req.params.id}.`))
      send(res, jsonOutcome(200, entry))
    })
  }

  // ---- the money-moving POSTs, each wrapped by the stage's layer ---------------
  // Express matches /transfers, /TRANSFERS and /transfers/ alike, so the
  // route a layer scopes keys by is the name given here (op.route), never the
  // spelling of the request (op.path): one route, one key space.
  function moneyRoute<S extends z.ZodType>(path: string, schema: S, move: (clientId: string, payload: z.infer<S>) => Outcome) {
    const route = `POST ${path}`
    app.post(path, client, async (req: Request, res: Response) => {
      const clientId: string = res.locals.clientId
      const payload = parse(schema, req.body)
      // Answered like the layer's own malformed key (and with its policy), before the layer runs.
      const repeated = repeatedKeyProblem(req.headersDistinct)
      if (repeated) return send(res, repeated, layer.policyHeaders)
      const op: Operation = {
        clientId,
        route,
        path: req.path,
        idempotencyKey: req.get('idempotency-key'),
        headers: operationHeaders(req),
        payload: req.body,
        rawBody: (req as RawRequest).rawBody ?? '',
        async execute(inSameTransaction) {
          if ((await core.call()) === 'unavailable')
            return problem(503, 'core-unavailable', 'Core banking unavailable', 'No money moved; try again.', {
              headers: { 'Retry-After': '1' },
            })
          // IMMEDIATE takes the write lock up front, so two processes never
          // interleave their balance checks and updates.
          const outcome = db
            .transaction(() => {
              const outcome = move(clientId, payload)
              inSameTransaction?.(outcome)
              return outcome
            })
            .immediate()
          // Committed. The fault point of PUT /admin/core's crashAfterCommit (the same in pg/app.ts).
          core.afterCommit()
          return outcome
        },
      }
      send(res, await layer.handle(op), layer.policyHeaders)
    })
  }
  moneyRoute('/transfers', TransferBody, money.transfer)
  moneyRoute('/deposits', DepositBody, money.deposit)

  // ---- errors -----------------------------------------------------------------
  app.use((req: Request) => {
    throw new HttpProblem(problem(404, 'not-found', 'Not found', `No route ${req.method} ${req.path}.`))
  })
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return void res.destroy()
    send(res, toProblem(err))
  })
  return app
}

export function toProblem(err: unknown): Outcome {
  if (err instanceof HttpProblem) return err.outcome
  const e = err as { type?: string; status?: number; message?: string }
  if (e.type === 'entity.parse.failed') return problem(400, 'malformed-json', 'Malformed JSON', 'The body is not valid JSON.')
  if (e.type === 'entity.too.large') return problem(413, 'body-too-large', 'Body too large', 'The body exceeds the size limit.')
  if (e.type === 'charset.unsupported' || e.type === 'encoding.unsupported')
    return problem(415, 'unsupported-media-type', 'Unsupported media type', e.message ?? 'Send UTF-8 JSON, uncompressed.')
  if (typeof e.status === 'number' && e.status >= 400 && e.status < 500)
    return problem(e.status, 'bad-request', 'Bad request', e.message ?? 'The request could not be read.')
  // A bug, most likely in a stage's layer: say so in the server's log, not to the client.
  console.error(err)
  return problem(500, 'internal-error', 'Internal server error', 'The server failed; see its log.')
}
