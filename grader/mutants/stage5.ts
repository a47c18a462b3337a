// Stage 5 mutants: scopes that are too wide, retention that is missing,
// extended, mis-scaled or never cleaned up, and a policy that is a constant. Each is one plausible edit of the
// reference solution, and each fails the check aimed at it on every seed.
import { editsOf, type Mutant } from './mutant.ts'

const layer = editsOf('idempotency.ts')
const store = editsOf('keyStore.ts')

/** The scope with other members in place of the client and the route. */
const scope = (clientId: string, route: string) =>
  layer('scope', '{ clientId: op.clientId, route: op.route, key: request.key }', `{ clientId: ${clientId}, route: ${route}, key: request.key }`)
/** expires_at as the claim's INSERT writes it. */
const expiresAt = (value: string) => store('claim', 'now + ttlMs', value)
/** The test that forgets an expired key when a request reads it. */
const expiredOnRead = 'if (row.expiresAt <= now'
const mismatch = "if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }"
/** The interval between purges, whatever it is, made infinite; stage 6 makes the same mistake. */
export const neverPurge = store('purgeEveryMs', '= …', '= Number.POSITIVE_INFINITY')

export const stage5Mutants: Mutant[] = [
  {
    id: 'global-key-scope',
    stage: 5,
    title: 'One key space for every client and route: two clients that pick the same key collide',
    mustFail: 'scope-per-client',
    edits: [scope("'*'", "'*'")],
  },
  {
    id: 'scope-without-client',
    stage: 5,
    title: 'Scoped by route and key only: another client learns of our key (409, 422) or gets our response',
    mustFail: 'no-cross-client-signal',
    edits: [scope("'*'", 'op.route')],
  },
  {
    id: 'scope-without-route',
    stage: 5,
    title: 'Scoped by client and key only: a key used for a transfer blocks a deposit',
    mustFail: 'scope-per-route',
    edits: [scope('op.clientId', "'*'")],
  },
  {
    id: 'no-expiry',
    stage: 5,
    title: 'Keys never expire: a key is remembered (and its row kept) forever',
    mustFail: 'new-execution-after-expiry',
    edits: [expiresAt('Number.MAX_SAFE_INTEGER')],
  },
  {
    id: 'expiry-from-last-access',
    stage: 5,
    title: 'Every retry pushes expiry back: a client that keeps retrying keeps its key forever',
    mustFail: 'new-execution-after-expiry',
    edits: [
      store(
        'claim',
        mismatch,
        (found) => `db.prepare(\`UPDATE idempotency_keys SET expires_at = ? WHERE \${where}\`).run(now + ttlMs, clientId, route, key)\n        ${found}`,
      ),
    ],
  },
  {
    id: 'ttl-in-seconds',
    stage: 5,
    title: 'LAB_KEY_TTL_MS read as seconds but added to milliseconds: keys expire a thousand times too soon',
    mustFail: 'replay-before-expiry',
    edits: [expiresAt('now + ttlMs / 1000')],
  },
  {
    id: 'never-purged',
    stage: 5,
    title: 'Expired keys are ignored on lookup but never deleted unless reused: the table grows without bound',
    mustFail: 'purge-bounded',
    edits: [neverPurge],
  },
  {
    id: 'purge-own-client-only',
    stage: 5,
    title: "The purge deletes the requesting client's expired keys only: another client's stay in the table until that client comes back",
    mustFail: 'histories-5',
    edits: [
      store('purge', 'db.prepare<[number, number]>', 'db.prepare<[number, string, number]>'),
      store('purge', 'WHERE expires_at <= ? AND', 'WHERE expires_at <= ? AND client_id = ? AND'),
      store('claim', 'lastPurge = now\n          purge.run(now, now)', 'lastPurge = now\n          purge.run(now, clientId, now)'),
      store('claim', 'purge.run(now, now)\n          continue', 'purge.run(now, clientId, now)\n          continue'),
    ],
  },
  {
    id: 'purge-every-ttl',
    stage: 5,
    title: 'The purge runs once per TTL, not once per min(TTL, 60 s): with a 24 h TTL, a day of expired keys lingers',
    mustFail: 'purge-bounded',
    edits: [store('createKeyStore', 'Math.min(ttlMs, 60_000)', 'ttlMs')],
  },
  {
    id: 'policy-hard-coded',
    stage: 5,
    title: 'The policy header copied from the docs: it states 24 h and 30 s whatever the server is configured with',
    mustFail: 'policy-published',
    edits: [layer('Idempotency-Key-Policy', '`ttl=…`', '\'ttl=86400, lease=30, scope="client route"\'')],
  },
  {
    id: 'policy-lease-floored',
    stage: 5,
    title: 'The policy floors the lease to whole seconds: a 1.5 s lease is published as lease=1, a promise shorter than the lease a retry meets',
    mustFail: 'histories-5',
    edits: [layer('Idempotency-Key-Policy', 'Math.ceil(config.leaseMs / 1000)', 'Math.floor(config.leaseMs / 1000)')],
  },
  {
    id: 'scope-by-raw-path',
    stage: 5,
    title: 'Scoped by the URL as typed: /transfers, /TRANSFERS and /transfers/ are one route to Express but three key spaces',
    mustFail: 'one-route-any-spelling',
    edits: [scope('op.clientId', '`POST ${op.path}`')],
  },
  {
    id: 'response-cache-by-body',
    stage: 5,
    title: 'A cache of completed answers keyed by key and body, not by client: another client resending our exact request gets our 201',
    mustFail: 'no-cross-client-signal',
    edits: [
      layer('import #bank/layer.ts', '{ CreateLayer }', '{ CreateLayer, Outcome }'),
      layer(
        'createLayer',
        '  return {\n',
        (found) => `  // A fast path: a retry of a completed request (same key, same body) skips the database.
  const answered = new Map<string, Outcome>()\n${found}`,
      ),
      layer(
        'handle',
        '// The scope: who sent it',
        (found) => `const cached = answered.get(request.key + request.fingerprint)
      if (cached) return replay(cached)
      ${found}`,
      ),
      layer(
        'handle',
        'return executeClaimed(op, {…})',
        `const outcome = await executeClaimed(op, {
        complete: (result) => keys.complete(scope, claim.owner, result),
        release: () => keys.release(scope, claim.owner),
      })
      if (outcome.status < 500) answered.set(request.key + request.fingerprint, outcome)
      return outcome`,
      ),
    ],
  },
  {
    id: 'expired-only-by-purge',
    stage: 5,
    title: 'An expired key is forgotten only when the periodic purge deletes its row: until then it is still replayed',
    mustFail: 'expiry-without-purge',
    edits: [store('claim', `${expiredOnRead}…\n        }\n`, '// Expired rows are deleted by the purge above.\n')],
  },
  {
    id: 'ttl-from-completion',
    stage: 5,
    title: 'expires_at is set when the response is stored: a slow first request gets a longer life',
    mustFail: 'ttl-from-first-request',
    edits: [store('complete', 'lease_until = NULL,', (found) => `${found} expires_at = CAST(unixepoch('subsec') * 1000 AS INTEGER) + \${ttlMs},`)],
  },
  {
    id: 'expiry-ignores-lease',
    stage: 5,
    title: 'An expired key is forgotten even while its first request is still running under a live lease',
    mustFail: 'in-flight-across-ttl',
    edits: [
      store('claim', `${expiredOnRead} && (…)) {`, `${expiredOnRead}) {`),
      store('purge', "(status = 'completed' OR", "(status IN ('completed', 'in_progress') OR"),
    ],
  },
  {
    id: 'purge-ignores-lease',
    stage: 5,
    title:
      'The purge deletes every expired row, in progress or not: a claim that outlives its key (a lease longer than the TTL) vanishes, and its duplicate executes',
    mustFail: 'in-flight-across-ttl',
    edits: [store('purge', "(status = 'completed' OR lease_until <= ?)", '(? IS NOT NULL)')],
  },
  {
    id: 'credentials-stored',
    stage: 5,
    title: "the request's headers are stored in the key row with the response, for debugging: Authorization, the client's API key, in clear",
    mustFail: 'no-credentials-at-rest',
    edits: [
      layer('handle', 'keys.complete(scope, claim.owner, outcome)', 'keys.complete(scope, claim.owner, outcome, op.headers)'),
      store(
        'createKeyStore',
        'response_body    TEXT,\n',
        (found) => `${found}      request_headers  TEXT,  -- JSON: the request as it came, for support tickets\n`,
      ),
      store('complete', 'db.prepare<[number, ', (found) => `${found}string, `),
      store('complete', 'response_body = ?', (found) => `${found}, request_headers = ?`),
      store('complete', 'response: Outcome): void', 'response: Outcome, request: Readonly<Record<string, string>> = {}): void'),
      store('complete', 'response.body, clientId', 'response.body, JSON.stringify(request), clientId'),
    ],
  },
  {
    id: 'expiry-after-fingerprint',
    stage: 5,
    title:
      'the fingerprint is compared before the expiry ("the body first", as in stage 3): a key past its TTL sent with another body gets 422 instead of executing as new',
    mustFail: 'histories-5',
    edits: [
      // Moved: out of its place after the expiry test, to before it.
      store('claim', `        ${mismatch}\n`, ''),
      store('claim', expiredOnRead, (found) => `${mismatch}\n        ${found}`),
    ],
  },
]
