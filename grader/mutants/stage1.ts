// Stage 1 mutants: four ways to record a key that look right and are not.
//
// Every one passes a single sequential retry test or a single-process test;
// each fails the check aimed at its bug on every seed, because those checks
// hold the core shut until every request is either answered or inside it.
import type { Mutant } from './mutant.ts'

const claimBody = `    claim(key: string): boolean {
      try {
        insert.run(key, new Date().toISOString())
        return true
      } catch (error) {
        // The failed INSERT *is* the answer: someone claimed this key first,
        // even if they did it a microsecond ago in another process.
        if (isUniqueViolation(error)) return false
        throw error
      }
    },`

const claimCall = `      if (!keys.claim(key)) return alreadyProcessed(key)

      // The transfer happens here, once per key.
      return op.execute()`

export const stage1Mutants: Mutant[] = [
  {
    id: 'check-then-insert',
    stage: 1,
    title: 'SELECT the key, then INSERT it after an await: simultaneous retries all pass the SELECT',
    mustFail: 'simultaneous-retries',
    edits: [
      { file: 'keyStore.ts', find: "import type { Db } from '#bank/db.ts'", replace: "import { setTimeout as sleep } from 'node:timers/promises'\nimport type { Db } from '#bank/db.ts'" },
      // Without the constraint, nothing catches the second INSERT.
      { file: 'keyStore.ts', find: 'key        TEXT PRIMARY KEY,', replace: 'key        TEXT NOT NULL,' },
      { file: 'keyStore.ts', find: 'export function createKeyStore(db: Db) {', replace: 'export function createKeyStore(db: Db, lookupMs = 0) {' },
      {
        file: 'keyStore.ts',
        find: claimBody,
        replace: `    async claim(key: string): Promise<boolean> {
      if (db.prepare('SELECT 1 FROM idempotency_keys WHERE key = ?').get(key)) return false
      await sleep(lookupMs) // e.g. a fraud check: any await here is a window
      insert.run(key, new Date().toISOString())
      return true
    },`,
      },
      { file: 'idempotency.ts', find: 'createLayer: CreateLayer = ({ db }) => {', replace: 'createLayer: CreateLayer = ({ db, config }) => {' },
      { file: 'idempotency.ts', find: 'createKeyStore(db)', replace: 'createKeyStore(db, config.processingDelayMs)' },
      { file: 'idempotency.ts', find: 'if (!keys.claim(key))', replace: 'if (!(await keys.claim(key)))' },
    ],
  },
  {
    id: 'in-memory-lock',
    stage: 1,
    title: 'A Map in memory decides who claimed a key: right in one process, wrong in two',
    mustFail: 'two-instances-one-database',
    edits: [
      {
        file: 'keyStore.ts',
        find: claimBody,
        replace: `    claim(key: string): boolean {
      if (claimed.has(key)) return false
      claimed.set(key, true)
      record.run(key, new Date().toISOString()) // written down, but never consulted
      return true
    },`,
      },
      {
        file: 'keyStore.ts',
        find: '  return {\n',
        replace: `  const claimed = new Map<string, boolean>()
  const record = db.prepare<[string, string]>('INSERT OR IGNORE INTO idempotency_keys (key, created_at) VALUES (?, ?)')
  return {\n`,
      },
    ],
  },
  {
    id: 'insert-or-ignore',
    stage: 1,
    title: 'INSERT OR IGNORE without looking at whether a row was inserted: every retry executes',
    mustFail: 'retries-execute-once',
    edits: [{ file: 'keyStore.ts', find: "'INSERT INTO idempotency_keys", replace: "'INSERT OR IGNORE INTO idempotency_keys" }],
  },
  {
    id: 'record-after-execute',
    stage: 1,
    title: 'Look the key up first, record it only after executing: simultaneous retries all execute',
    mustFail: 'simultaneous-retries',
    edits: [
      {
        file: 'keyStore.ts',
        find: '  return {\n',
        replace: `  const seen = db.prepare<[string]>('SELECT 1 FROM idempotency_keys WHERE key = ?')
  return {
    seen: (key: string) => seen.get(key) !== undefined,\n`,
      },
      {
        file: 'idempotency.ts',
        find: claimCall,
        replace: `      if (keys.seen(key)) return alreadyProcessed(key)
      const outcome = await op.execute()
      keys.claim(key) // too late: every request that arrived meanwhile has executed too
      return outcome`,
      },
    ],
  },
]
