// Stage 4's known-wrong implementations: replays that are not the first
// response, exactly, markers in the wrong place, and stored answers given to
// bodies they were not the answer to.
import { editsOf, type Mutant } from './mutant.ts'

const layer = editsOf('idempotency.ts')
const store = editsOf('keyStore.ts')

/** Another way to run the claimed request, in place of `return executeClaimed(op, {…})`. */
const executeInstead = (replace: string) => layer('handle', 'return executeClaimed(op, {…})', replace)
/** The claimed request run as the solution runs it (`release` on a failure), then its outcome looked at by `after`. */
const executeThen = (release: string, after: string) =>
  executeInstead(`const outcome = await executeClaimed(op, {
        complete: (result) => keys.complete(key, claim.owner, result),
        release: () => ${release},
      })
      ${after}
      return outcome`)
const replayedHeaders = (list: string) => store('REPLAYED_HEADERS', "['Content-Type', 'Location']", list)

export const stage4Mutants: Mutant[] = [
  {
    id: 'replay-rebuilds-body',
    stage: 4,
    title: 'the replay is rebuilt with the current balance instead of sending the stored bytes',
    mustFail: 'replay-not-recomputed',
    edits: [
      layer(
        'handle',
        'return replay(claim.response)',
        `{
        // Refresh the stored answer with the account as it is now.
        const body = JSON.parse(claim.response.body)
        if (body.from) body.balanceAfter = db.prepare('SELECT balance FROM accounts WHERE id = ?').pluck().get(body.from)
        return replay({ ...claim.response, body: JSON.stringify(body) })
      }`,
      ),
    ],
  },
  {
    id: 'replay-reexecutes',
    stage: 4,
    title: 'a completed duplicate is executed again and its new result sent, marked as a replay',
    mustFail: 'replay-exact',
    edits: [layer('handle', 'replay(claim.response)', 'replay(await op.execute())')],
  },
  {
    id: 'replay-status-200',
    stage: 4,
    title: 'the replay answers 200 instead of the stored status (201)',
    mustFail: 'replay-exact',
    edits: [layer('replay', '...stored,', (found) => `${found}\n  status: 200,`)],
  },
  {
    id: 'replay-drops-content-type',
    stage: 4,
    title: 'Content-Type is not stored, so the replay goes out without it',
    mustFail: 'replay-exact',
    edits: [replayedHeaders("['Location']")],
  },
  {
    id: 'marker-on-first-response',
    stage: 4,
    title: 'Idempotent-Replayed: true is sent on first responses too',
    mustFail: 'first-response-unmarked',
    edits: [
      executeInstead(`return replay(
        await executeClaimed(op, {
          complete: (outcome) => keys.complete(key, claim.owner, outcome),
          release: () => keys.release(key, claim.owner),
        }),
      )`),
    ],
  },
  {
    id: 'stores-5xx',
    stage: 4,
    title: 'a 503 from the core is stored and replayed, so the retry never executes',
    mustFail: 'failures-not-stored',
    edits: [executeThen('undefined', '// Store every answer, failures included.\n      if (outcome.status >= 500) keys.complete(key, claim.owner, outcome)')],
  },
  {
    id: 'replay-drops-location',
    stage: 4,
    title: 'Location is not stored, so the replay of a 201 goes out without it',
    mustFail: 'replay-exact',
    edits: [replayedHeaders("['Content-Type']")],
  },
  {
    id: 'replay-unmarked',
    stage: 4,
    title: 'the stored response is sent back as it is, without Idempotent-Replayed',
    mustFail: 'replay-marked',
    edits: [layer('replay', "{ ...stored.headers, [REPLAYED_HEADER]: 'true' },", '{ ...stored.headers }, // exactly what was stored, nothing added')],
  },
  {
    id: 'replay-before-fingerprint',
    stage: 4,
    title: 'a completed key replays its stored response to any body: the fingerprint is compared only while in flight',
    mustFail: 'changed-body-after-replay',
    edits: [
      store(
        'claim',
        'if (row.fingerprint !== fingerprint)',
        "// Done is done: a completed key answers with what it stored.\n        if (row.fingerprint !== fingerprint && row.status !== 'completed')",
      ),
    ],
  },
  {
    id: 'release-by-expiring-lease',
    stage: 4,
    title: 'a 5xx "releases" the key by expiring its lease: the retry takes it over, but the failed body stays bound to it',
    mustFail: 'changed-body-after-failure',
    edits: [store('release', 'DELETE FROM idempotency_keys WHERE', 'UPDATE idempotency_keys SET lease_until = 0 WHERE')],
  },
  {
    id: 'only-success-stored',
    stage: 4,
    title: 'only a 201 is kept: a 402 is forgotten so the retry can succeed after a top-up',
    mustFail: 'replay-stored-402',
    edits: [
      executeThen(
        'keys.release(key, claim.owner)',
        `// A refusal is not final: the customer may top up and try again.
      if (outcome.status >= 400 && outcome.status < 500) db.prepare('DELETE FROM idempotency_keys WHERE key = ?').run(key)`,
      ),
    ],
  },
  {
    id: 'replay-consumes-key',
    stage: 4,
    title: 'the key row is deleted once its response has been replayed (a one-shot replay), so the next retry executes again',
    mustFail: 'replay-burst',
    edits: [
      store(
        'claim',
        "if (row.status === 'completed')\n",
        `if (row.status === 'completed') {
          // The client has its answer now: the key is spent, keep the table small.
          db.prepare('DELETE FROM idempotency_keys WHERE key = ?').run(key)\n`,
      ),
      store('claim', 'body: row.responseBody! },\n          }', (found) => `${found}\n        }`),
    ],
  },
  {
    id: 'completion-after-commit',
    stage: 4,
    title:
      'the response is stored after the transfer returns, outside its transaction (as express-idempotency stores it after sending): a crash in between leaves the money moved and the key in progress',
    mustFail: 'crash-after-commit',
    edits: [
      executeInstead(`// The transfer first, then its response stored under the key.
      const outcome = await op.execute()
      if (outcome.status >= 500) keys.release(key, claim.owner)
      else keys.complete(key, claim.owner, outcome)
      return outcome`),
    ],
  },
  {
    id: 'client-header-decides',
    stage: 4,
    title:
      'a header the client sent decides whether the request runs (as a library read X-Hit: true as its own cache hit): the request is never answered, and its key stays in flight',
    mustFail: 'histories-4',
    edits: [
      layer(
        'handle',
        '// The transfer happens here.',
        (found) => `// A hit in the cache in front of us: the answer is on its way from there.
      if (op.headers['x-hit'] === 'true') return new Promise<Outcome>(() => {})
      ${found}`,
      ),
    ],
  },
]
