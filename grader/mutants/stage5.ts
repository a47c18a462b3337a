// Stage 5 mutants: scopes that are too wide, retention that is missing,
// extended, mis-scaled or never cleaned up, and a policy that is a constant. Each is one plausible edit of the
// reference solution, and each fails the check aimed at it on every seed.
import type { Mutant } from './mutant.ts'

const scope = 'const scope = { clientId: op.clientId, route: op.route, key: request.key }'
const expiresAtInsert = 'insert.run(clientId, route, key, fingerprint, owner, now + leaseMs, now + ttlMs, new Date(now).toISOString())'

export const stage5Mutants: Mutant[] = [
  {
    id: 'global-key-scope',
    stage: 5,
    title: 'One key space for every client and route: two clients that pick the same key collide',
    mustFail: 'scope-per-client',
    edits: [{ file: 'idempotency.ts', find: scope, replace: "const scope = { clientId: '*', route: '*', key: request.key }" }],
  },
  {
    id: 'scope-without-client',
    stage: 5,
    title: 'Scoped by route and key only: another client learns of our key (409, 422) or gets our response',
    mustFail: 'no-cross-client-signal',
    edits: [{ file: 'idempotency.ts', find: scope, replace: "const scope = { clientId: '*', route: op.route, key: request.key }" }],
  },
  {
    id: 'scope-without-route',
    stage: 5,
    title: 'Scoped by client and key only: a key used for a transfer blocks a deposit',
    mustFail: 'scope-per-route',
    edits: [{ file: 'idempotency.ts', find: scope, replace: "const scope = { clientId: op.clientId, route: '*', key: request.key }" }],
  },
  {
    id: 'no-expiry',
    stage: 5,
    title: 'Keys never expire: a key is remembered (and its row kept) forever',
    mustFail: 'new-execution-after-expiry',
    edits: [{ file: 'keyStore.ts', find: expiresAtInsert, replace: expiresAtInsert.replace('now + ttlMs', 'Number.MAX_SAFE_INTEGER') }],
  },
  {
    id: 'expiry-from-last-access',
    stage: 5,
    title: 'Every retry pushes expiry back: a client that keeps retrying keeps its key forever',
    mustFail: 'new-execution-after-expiry',
    edits: [
      {
        file: 'keyStore.ts',
        find: "        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }",
        replace: `        db.prepare(\`UPDATE idempotency_keys SET expires_at = ? WHERE \${where}\`).run(now + ttlMs, clientId, route, key)
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }`,
      },
    ],
  },
  {
    id: 'ttl-in-seconds',
    stage: 5,
    title: 'LAB_KEY_TTL_MS read as seconds but added to milliseconds: keys expire a thousand times too soon',
    mustFail: 'replay-before-expiry',
    edits: [{ file: 'keyStore.ts', find: expiresAtInsert, replace: expiresAtInsert.replace('now + ttlMs', 'now + ttlMs / 1000') }],
  },
  {
    id: 'never-purged',
    stage: 5,
    title: 'Expired keys are ignored on lookup but never deleted unless reused: the table grows without bound',
    mustFail: 'purge-bounded',
    edits: [
      {
        file: 'keyStore.ts',
        find: 'const purgeEveryMs = Math.max(1, Math.min(ttlMs, 60_000))',
        replace: 'const purgeEveryMs = Number.POSITIVE_INFINITY',
      },
    ],
  },
  {
    id: 'policy-hard-coded',
    stage: 5,
    title: 'The policy header copied from the docs: it states 24 h and 30 s whatever the server is configured with',
    mustFail: 'policy-published',
    edits: [
      {
        file: 'idempotency.ts',
        find: '\'Idempotency-Key-Policy\': `ttl=${Math.floor(config.keyTtlMs / 1000)}, lease=${Math.ceil(config.leaseMs / 1000)}, scope="client route"`,',
        replace: "'Idempotency-Key-Policy': 'ttl=86400, lease=30, scope=\"client route\"',",
      },
    ],
  },
  {
    id: 'scope-by-raw-path',
    stage: 5,
    title: 'Scoped by the URL as typed: /transfers, /TRANSFERS and /transfers/ are one route to Express but three key spaces',
    mustFail: 'one-route-any-spelling',
    edits: [{ file: 'idempotency.ts', find: scope, replace: 'const scope = { clientId: op.clientId, route: `POST ${op.path}`, key: request.key }' }],
  },
  {
    id: 'response-cache-by-body',
    stage: 5,
    title: 'A cache of completed answers keyed by key and body, not by client: another client resending our exact request gets our 201',
    mustFail: 'no-cross-client-signal',
    edits: [
      {
        file: 'idempotency.ts',
        find: "import type { CreateLayer } from '#bank/layer.ts'",
        replace: "import type { CreateLayer, Outcome } from '#bank/layer.ts'",
      },
      {
        file: 'idempotency.ts',
        find: '  const keys = createKeyStore(db, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })\n',
        replace: `  const keys = createKeyStore(db, { leaseMs: config.leaseMs, ttlMs: config.keyTtlMs })
  // A fast path: a retry of a completed request (same key, same body) skips the database.
  const answered = new Map<string, Outcome>()\n`,
      },
      {
        file: 'idempotency.ts',
        find: '      // The scope: who sent it and where, not only the string they chose.\n',
        replace: `      const cached = answered.get(request.key + request.fingerprint)
      if (cached) return replay(cached)
      // The scope: who sent it and where, not only the string they chose.\n`,
      },
      {
        file: 'idempotency.ts',
        find: `      return executeClaimed(op, {
        complete: (outcome) => keys.complete(scope, claim.owner, outcome),
        release: () => keys.release(scope, claim.owner),
      })`,
        replace: `      const outcome = await executeClaimed(op, {
        complete: (result) => keys.complete(scope, claim.owner, result),
        release: () => keys.release(scope, claim.owner),
      })
      if (outcome.status < 500) answered.set(request.key + request.fingerprint, outcome)
      return outcome`,
      },
    ],
  },
  {
    id: 'expired-only-by-purge',
    stage: 5,
    title: 'An expired key is forgotten only when the periodic purge deletes its row: until then it is still replayed',
    mustFail: 'expiry-without-purge',
    edits: [
      {
        file: 'keyStore.ts',
        find: `        if (row.expiresAt <= now && (row.status === 'completed' || row.leaseUntil! <= now)) {
          // Expired: forget it and treat this request as new.
          purge.run(now, now)
          continue
        }
`,
        replace: `        // Expired rows are deleted by the purge above.
`,
      },
    ],
  },
  {
    id: 'ttl-from-completion',
    stage: 5,
    title: 'expires_at is set when the response is stored: a slow first request gets a longer life',
    mustFail: 'ttl-from-first-request',
    edits: [
      {
        file: 'keyStore.ts',
        find: "     SET status = 'completed', owner = NULL, lease_until = NULL,",
        replace: "     SET status = 'completed', owner = NULL, lease_until = NULL, expires_at = CAST(unixepoch('subsec') * 1000 AS INTEGER) + ${ttlMs},",
      },
    ],
  },
  {
    id: 'expiry-ignores-lease',
    stage: 5,
    title: 'An expired key is forgotten even while its first request is still running under a live lease',
    mustFail: 'in-flight-across-ttl',
    edits: [
      {
        file: 'keyStore.ts',
        find: "        if (row.expiresAt <= now && (row.status === 'completed' || row.leaseUntil! <= now)) {",
        replace: '        if (row.expiresAt <= now) {',
      },
      {
        file: 'keyStore.ts',
        find: "     WHERE expires_at <= ? AND (status = 'completed' OR lease_until <= ?)`,",
        replace: "     WHERE expires_at <= ? AND (status IN ('completed', 'in_progress') OR lease_until <= ?)`,",
      },
    ],
  },
  {
    id: 'credentials-stored',
    stage: 5,
    title: "the request's headers are stored in the key row with the response, for debugging: Authorization, the client's API key, in clear",
    mustFail: 'no-credentials-at-rest',
    edits: [
      {
        file: 'idempotency.ts',
        find: '        complete: (outcome) => keys.complete(scope, claim.owner, outcome),',
        replace: '        complete: (outcome) => keys.complete(scope, claim.owner, outcome, op.headers),',
      },
      {
        file: 'keyStore.ts',
        find: `      response_body    TEXT,
      created_at       TEXT NOT NULL,`,
        replace: `      response_body    TEXT,
      request_headers  TEXT,  -- JSON: the request as it came, for support tickets
      created_at       TEXT NOT NULL,`,
      },
      {
        file: 'keyStore.ts',
        find: `  const complete = db.prepare<[number, string, string, string, string, string, string]>(
    \`UPDATE idempotency_keys
     SET status = 'completed', owner = NULL, lease_until = NULL,
         response_status = ?, response_headers = ?, response_body = ?`,
        replace: `  const complete = db.prepare<[number, string, string, string, string, string, string, string]>(
    \`UPDATE idempotency_keys
     SET status = 'completed', owner = NULL, lease_until = NULL,
         response_status = ?, response_headers = ?, response_body = ?, request_headers = ?`,
      },
      {
        file: 'keyStore.ts',
        find: `    complete({ clientId, route, key }: Scope, owner: string, response: Outcome): void {
      const headers = Object.fromEntries(REPLAYED_HEADERS.filter((h) => h in response.headers).map((h) => [h, response.headers[h]]))
      const changes = complete.run(response.status, JSON.stringify(headers), response.body, clientId, route, key, owner).changes`,
        replace: `    complete({ clientId, route, key }: Scope, owner: string, response: Outcome, request: Readonly<Record<string, string>> = {}): void {
      const headers = Object.fromEntries(REPLAYED_HEADERS.filter((h) => h in response.headers).map((h) => [h, response.headers[h]]))
      const changes = complete.run(response.status, JSON.stringify(headers), response.body, JSON.stringify(request), clientId, route, key, owner).changes`,
      },
    ],
  },
  {
    id: 'expiry-after-fingerprint',
    stage: 5,
    title:
      'the fingerprint is compared before the expiry ("the body first", as in stage 3): a key past its TTL sent with another body gets 422 instead of executing as new',
    mustFail: 'histories-5',
    edits: [
      {
        file: 'keyStore.ts',
        find: `        if (!row) continue
        if (row.expiresAt <= now`,
        replace: `        if (!row) continue
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.expiresAt <= now`,
      },
      {
        file: 'keyStore.ts',
        find: `        }
        if (row.fingerprint !== fingerprint) return { kind: 'mismatch' }
        if (row.status === 'completed')`,
        replace: `        }
        if (row.status === 'completed')`,
      },
    ],
  },
]
