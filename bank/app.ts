// The bank's HTTP surface, one for both stores. The contract is CONTRACT.md;
// this file wires it up over a Store (store.ts: the SQLite file or
// PostgreSQL). Money-moving POSTs go through the stage's idempotency layer (see layer.ts).
import { randomUUID } from 'node:crypto'
import express, { type NextFunction, type Request, type Response } from 'express'
import type { z } from 'zod'
import { hashApiKey, newApiKey, requireAdmin, requireClient } from './auth.ts'
import type { Config } from './config.ts'
import { clockAdmin } from './clockAdmin.ts'
import type { Generations } from './generations.ts'
import { instanceAdmin } from './instanceAdmin.ts'
import { CoreBanking } from './core.ts'
import type { Layer, Operation, StoreKind } from './layer.ts'
import { type Move, notOwner, unknownAccount } from './money.ts'
import { jsonBody, type RawRequest } from './body.ts'
import { repeatedKeyProblem } from './keyLines.ts'
import { HttpProblem, jsonOutcome, problem, writeOutcome as send, type Outcome } from './problem.ts'
import { requestLog } from './requestLog.ts'
import { CoreUpdate, DepositBody, NewAccount, NewClient, TransferBody } from './schemas.ts'
import { storableParam } from './storableText.ts'
import type { Store } from './store.ts'

function parse<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
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
function requireHost(req: Request, _res: Response, next: NextFunction) {
  if (req.httpVersion === '1.1' && req.headers.host === undefined)
    throw new HttpProblem(problem(400, 'bad-request', 'Bad request', 'An HTTP/1.1 request needs a Host header.'))
  next()
}

/**
 * The request's headers for Operation.headers: as Node received them (names in
 * lower case, repeated lines joined as Node joins them; a repeated Set-Cookie,
 * which Node keeps as a list, joined with ", "), frozen.
 */
function operationHeaders(req: Request): Readonly<Record<string, string>> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(req.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  return Object.freeze(headers)
}

/**
 * `core`: the core-banking stand-in (one per generation, generations.ts);
 * `generations`: the running process's, for PUT /admin/instance (a bank
 * built without it, in a test, has no such route).
 */
export function createApp<K extends StoreKind>(
  store: Store<K>,
  config: Config,
  layer: Layer<K>,
  { core = new CoreBanking(config.processingDelayMs), generations }: { core?: CoreBanking; generations?: () => Generations } = {},
) {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(requestLog())
  const client = requireClient((apiKeyHash) => store.clientWithKey(apiKeyHash))
  const admin = requireAdmin(config.adminToken)

  app.use(requireHost)
  app.use(jsonBody(config.bodyLimit))
  app.param('id', storableParam)

  app.get('/health', (_req, res) => send(res, jsonOutcome(200, { status: 'ok', pid: process.pid })))

  // ---- admin ----------------------------------------------------------------
  app.post('/admin/clients', admin, async (req, res) => {
    const { name } = parse(NewClient, req.body)
    const id = `cl_${randomUUID()}`
    const apiKey = newApiKey()
    await store.addClient({ id, name, apiKeyHash: hashApiKey(apiKey) })
    send(res, jsonOutcome(201, { id, name, apiKey }))
  })

  // ?client=cl_…&client=cl_…: only those clients' accounts and the entries they made.
  app.get('/admin/ledger', admin, async (req, res) => {
    const clients = req.query.client === undefined ? undefined : [req.query.client].flat().map(String)
    send(res, jsonOutcome(200, await store.ledger(clients)))
  })
  app.get('/admin/core', admin, (_req, res) => send(res, jsonOutcome(200, core.state())))
  app.put('/admin/core', admin, (req, res) => send(res, jsonOutcome(200, core.update(parse(CoreUpdate, req.body)))))
  clockAdmin(app, admin, parse)
  if (generations) instanceAdmin(app, admin, parse, generations)

  // ---- clients --------------------------------------------------------------
  app.post('/accounts', client, async (req, res) => {
    const { balance } = parse(NewAccount, req.body)
    const id = `acc_${randomUUID()}`
    await store.addAccount({ id, clientId: res.locals.clientId, balance })
    send(res, jsonOutcome(201, { id, balance }, { Location: `/accounts/${id}` }))
  })

  app.get('/accounts/:id', client, async (req, res) => {
    const id = String(req.params.id)
    const account = await store.account(id)
    if (!account) throw new HttpProblem(unknownAccount(id))
    if (account.clientId !== res.locals.clientId) throw new HttpProblem(notOwner(id))
    send(res, jsonOutcome(200, { id: account.id, balance: account.balance }))
  })

  for (const kind of ['transfer', 'deposit'] as const) {
    app.get(`/${kind}s/:id`, client, async (req, res) => {
      const entry = await store.entry(kind, String(req.params.id), res.locals.clientId)
      if (!entry) throw new HttpProblem(problem(404, `${kind}-not-found`, 'Not found', `You have no ${kind} ${req.params.id}.`))
      send(res, jsonOutcome(200, entry))
    })
  }

  // ---- the money-moving POSTs, each wrapped by the stage's layer ---------------
  // Express matches /transfers, /TRANSFERS and /transfers/ alike, so the
  // route a layer scopes keys by is the name given here (op.route), never the
  // spelling of the request (op.path): one route, one key space.
  function moneyRoute<S extends z.ZodType>(path: string, schema: S, moveOf: (payload: z.infer<S>) => Move) {
    const route = `POST ${path}`
    app.post(path, client, async (req: Request, res: Response) => {
      const clientId: string = res.locals.clientId
      const move = moveOf(parse(schema, req.body))
      // Answered like the layer's own malformed key (and with its policy), before the layer runs.
      const repeated = repeatedKeyProblem(req.headersDistinct)
      if (repeated) return send(res, repeated, layer.policyHeaders)
      const op: Operation<K> = {
        clientId,
        route,
        path: req.path,
        idempotencyKey: req.get('idempotency-key'),
        headers: operationHeaders(req),
        payload: req.body,
        rawBody: (req as RawRequest).rawBody ?? '',
        async execute(inSameTransaction) {
          // The core call first, with no transaction open (and, on PostgreSQL, no connection taken).
          if ((await core.call()) === 'unavailable')
            return problem(503, 'core-unavailable', 'Core banking unavailable', 'No money moved; try again.', {
              headers: { 'Retry-After': '1' },
            })
          const outcome = await store.runMoneyMove(clientId, move, inSameTransaction)
          // Committed. The fault point of PUT /admin/core's crashAfterCommit.
          core.afterCommit()
          return outcome
        },
      }
      send(res, await layer.handle(op), layer.policyHeaders)
    })
  }
  moneyRoute('/transfers', TransferBody, ({ from, to, amount }) => ({ kind: 'transfer', from, to, amount }))
  moneyRoute('/deposits', DepositBody, ({ to, amount }) => ({ kind: 'deposit', to, amount }))

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

function toProblem(err: unknown): Outcome {
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
