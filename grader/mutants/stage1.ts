// Stage 1 mutants: ways to record a key that look right and are not, and ways
// to read the header that are right on easy keys (lowercase UUIDs, lengths far
// from the limit) and wrong on the keys at the edges of the format.
//
// The claim mutants pass a single sequential retry test or a single-process
// test; each fails the check aimed at its bug on every seed, because those
// checks hold the core shut until every request is either answered or inside
// it. The header mutants fail because the checks send the boundary keys
// themselves (255 and 256, both forms, escapes, mixed case) on every seed.
import { editsOf, type Mutant } from './mutant.ts'

const store = editsOf('keyStore.ts')
const layer = editsOf('idempotency.ts')
const header = editsOf('keyHeader.ts')

/** Another claim() in place of the solution's, from its name to the comma after it. */
const claimMethod = (replace: string) => store('claim', 'claim(…', replace)
/** The key column without its PRIMARY KEY: nothing in the database stops a second row. */
const keyNotUnique = store('createKeyStore', 'key        TEXT PRIMARY KEY,', 'key        TEXT NOT NULL,')
/** Declarations added to createKeyStore, before the object it returns. */
const beforeStore = (lines: string) => store('createKeyStore', '  return {\n', (found) => `${lines}\n${found}`)
const keyLength = (length: string) => header('parseIdempotencyKey', 'key.length > MAX_KEY_LENGTH', `${length} > MAX_KEY_LENGTH`)

export const stage1Mutants: Mutant[] = [
  {
    id: 'check-then-insert',
    stage: 1,
    title: 'SELECT the key, then INSERT it after an await: simultaneous retries all pass the SELECT',
    mustFail: 'simultaneous-retries',
    edits: [
      store('import #bank/db.ts', 'import', (found) => `import { setTimeout as sleep } from 'node:timers/promises'\n${found}`),
      // Without the constraint, nothing catches the second INSERT.
      keyNotUnique,
      store('createKeyStore', '(db: Db)', '(db: Db, lookupMs = 0)'),
      claimMethod(`async claim(key: string): Promise<boolean> {
      if (db.prepare('SELECT 1 FROM idempotency_keys WHERE key = ?').get(key)) return false
      await sleep(lookupMs) // e.g. a fraud check: any await here is a window
      insert.run(key, new Date().toISOString())
      return true
    },`),
      layer('createLayer', '({ db })', '({ db, config })'),
      layer('keys', 'createKeyStore(db)', 'createKeyStore(db, config.processingDelayMs)'),
      layer('handle', 'if (!keys.claim(key))', 'if (!(await keys.claim(key)))'),
    ],
  },
  {
    id: 'in-memory-lock',
    stage: 1,
    title: 'A Map in memory decides who claimed a key: right in one process, wrong in two',
    mustFail: 'two-instances-one-database',
    edits: [
      claimMethod(`claim(key: string): boolean {
      if (claimed.has(key)) return false
      claimed.set(key, true)
      record.run(key, new Date().toISOString()) // written down, but never consulted
      return true
    },`),
      beforeStore(`  const claimed = new Map<string, boolean>()
  const record = db.prepare<[string, string]>('INSERT OR IGNORE INTO idempotency_keys (key, created_at) VALUES (?, ?)')`),
    ],
  },
  {
    id: 'insert-or-ignore',
    stage: 1,
    title: 'INSERT OR IGNORE without looking at whether a row was inserted: every retry executes',
    mustFail: 'retries-execute-once',
    edits: [store('insert', "'INSERT INTO", "'INSERT OR IGNORE INTO")],
  },
  {
    id: 'record-after-execute',
    stage: 1,
    title: 'Look the key up first, record it only after executing: simultaneous retries all execute',
    mustFail: 'simultaneous-retries',
    edits: [
      beforeStore("  const seen = db.prepare<[string]>('SELECT 1 FROM idempotency_keys WHERE key = ?')"),
      store('createKeyStore', '  return {\n', (found) => `${found}    seen: (key: string) => seen.get(key) !== undefined,\n`),
      layer(
        'handle',
        'if (!keys.claim(key))…return op.execute()',
        `if (keys.seen(key)) return alreadyProcessed(key)
      const outcome = await op.execute()
      keys.claim(key) // too late: every request that arrived meanwhile has executed too
      return outcome`,
      ),
    ],
  },
  {
    id: 'case-folded-key',
    stage: 1,
    title: 'keys are lowercased, like header names: two keys that differ in case are one key',
    mustFail: 'key-case-sensitive',
    edits: [header('parseIdempotencyKey', 'return key\n', 'return key.toLowerCase() // compare keys like header names\n')],
  },
  {
    id: 'key-limit-256',
    stage: 1,
    title: 'the length limit is 256 (a VARCHAR(256) column) instead of 255',
    mustFail: 'key-length-limit',
    edits: [header('MAX_KEY_LENGTH', "255 // Stripe's limit", '256 // fits a VARCHAR(256)')],
  },
  {
    id: 'key-limit-on-header',
    stage: 1,
    title: 'the length is checked on the header as written, so a quoted key of 255 characters (257 with quotes) is refused',
    mustFail: 'key-length-limit',
    edits: [keyLength('header.length')],
  },
  {
    id: 'key-limit-counts-escapes',
    stage: 1,
    title: 'the length is counted between the quotes, escapes included, so a quoted 255-character key with a \\" in it is refused',
    mustFail: 'key-length-limit',
    edits: [keyLength("(header.startsWith('\"') ? header.length - 2 : key.length)")],
  },
  {
    id: 'key-minimum-length',
    stage: 1,
    title: 'keys must be at least 8 characters long ("long enough to be unique"): a valid key of one character is refused',
    mustFail: 'key-format',
    edits: [
      header(
        'parseIdempotencyKey',
        "if (key.length === 0) return malformedKey('The key is empty.')",
        "if (key.length < 8) return malformedKey('The key is too short.')",
      ),
    ],
  },
  {
    id: 'quoted-params-ignored',
    stage: 1,
    title: 'a quoted key\'s parameters are ignored, not refused: "k";v=1 is read as the key k',
    mustFail: 'key-format',
    edits: [header('parseIdempotencyKey', "typeof value !== 'string' || params.size > 0", "typeof value !== 'string'")],
  },
  {
    id: 'quotes-stripped',
    stage: 1,
    title: 'the quoted form is read by cutting off the quotes, not parsed: "a\\"b" becomes a\\"b, not a"b',
    mustFail: 'quoted-key-same-as-bare',
    edits: [
      header(
        'parseIdempotencyKey',
        'try {…} catch {…\n    }',
        `if (!header.endsWith('"') || header.length < 2) return malformedKey('A quoted key must end with a quote.')
    key = header.slice(1, -1)`,
      ),
    ],
  },
  {
    id: 'latin1-keys',
    stage: 1,
    title: 'keys may hold any Latin-1 character (\\x20-\\xff), so é or ß passes as printable',
    mustFail: 'key-format',
    edits: [header('parseIdempotencyKey', '[\\x20-\\x7e]', '[\\x20-\\xff]')],
  },
  {
    id: 'key-optional',
    stage: 1,
    title: 'a request without a key simply runs unprotected, as if idempotency were optional',
    mustFail: 'key-required',
    edits: [
      layer(
        'handle',
        'const key = parseIdempotencyKey(op.idempotencyKey)',
        (found) => `if (op.idempotencyKey === undefined) return op.execute() // no key, no protection\n      ${found}`,
      ),
    ],
  },
  {
    id: 'key-unique-with-timestamp',
    stage: 1,
    title: 'the PRIMARY KEY is (key, created_at): the same key with another timestamp is a new row',
    mustFail: 'key-table-unique',
    edits: [keyNotUnique, store('createKeyStore', 'created_at TEXT NOT NULL\n', 'created_at TEXT NOT NULL,\n      PRIMARY KEY (key, created_at)\n')],
  },
  {
    id: 'sync-check-then-insert-no-pk',
    stage: 1,
    title:
      'SELECT the key, then INSERT it, with no await between them, on a table with no PRIMARY KEY or UNIQUE: one process cannot interleave the two (better-sqlite3 is synchronous), so the concurrency checks pass, but nothing in the database makes a key unique',
    mustFail: 'key-table-unique',
    edits: [
      keyNotUnique,
      claimMethod(`claim(key: string): boolean {
      // Synchronous, so nothing else in this process runs between the SELECT and the INSERT.
      if (db.prepare('SELECT 1 FROM idempotency_keys WHERE key = ?').get(key)) return false
      insert.run(key, new Date().toISOString())
      return true
    },`),
    ],
  },
  {
    id: 'body-as-key',
    stage: 1,
    title: 'the body, not the key, is claimed: paying the same amount twice on purpose is refused as a duplicate',
    mustFail: 'distinct-keys-distinct-transfers',
    edits: [layer('handle', 'keys.claim(key)', 'keys.claim(JSON.stringify(op.payload))')],
  },
  {
    id: 'released-on-refusal',
    stage: 1,
    title: 'a refused transfer (402, 403, 404) gives its key back "so a corrected retry can run": after a top-up the retry of the same intent moves money',
    mustFail: 'histories-1',
    edits: [
      layer(
        'handle',
        '// The transfer happens here…return op.execute()',
        `// The transfer happens here. A refused one moved nothing: free its key for the corrected retry.
      const outcome = await op.execute()
      if (outcome.status >= 400) db.prepare('DELETE FROM idempotency_keys WHERE key = ?').run(key)
      return outcome`,
      ),
    ],
  },
]
