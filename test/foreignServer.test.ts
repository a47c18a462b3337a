// `npm run grade -- N --server CMD`: a server in another language, graded by
// the same checks. The Python example must pass stages 1 and 5 (checks that
// need the SQLite file or the stage's TypeScript skipped, and listed), and a
// copy of it that claims the key only after executing must fail stage 1's
// concurrency checks with their usual message. The copy is made here, by one
// search-and-replace on bank.py (as grader/mutants does on the solutions).
import { spawnSync } from 'node:child_process'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { repoRoot } from '#harness/paths.ts'
import type { GradeResult } from '#grader/grade.ts'
import { findBwrap } from '#harness/sandbox.ts'
import { parseServerCommand } from '#harness/serverCommand.ts'
import { gradeIn, scratchDir } from './helpers/scratch.ts'

const example = resolve(repoRoot, 'examples', 'python')
const python = spawnSync('python3', ['--version'], { encoding: 'utf8' })
const hasPython = python.status === 0
if (!hasPython) console.warn('test/foreignServer.test.ts: skipped: python3 is not installed (the Python example needs Python 3.9 or newer)')
// With bubblewrap the servers run sandboxed, as a learner's would: this also checks what the sandbox binds for them.
const sandbox = !!findBwrap().path

/** The broken copy: it looks for the key, executes, and only then claims it; the core call is the gap. */
const CLAIM_AFTER_EXECUTING = {
  search: `    kind_of, result = claim(db, scope, fingerprint)
    if kind_of == "answer":
        return result
    return execute_claimed(db, scope, result, client_id, kind, body)`,
  replace: `    if db.execute("SELECT 1 FROM idempotency_keys WHERE client_id = ? AND route = ? AND key = ?", scope).fetchone():
        return claim(db, scope, fingerprint)[1]
    core.call()
    db.execute("BEGIN IMMEDIATE")
    outcome = move(db, client_id, kind, body)
    db.execute("COMMIT")
    claim(db, scope, fingerprint)
    return outcome`,
}

function brokenCopy(dir: string): string {
  const source = readFileSync(join(example, 'bank.py'), 'utf8')
  expect(source.split(CLAIM_AFTER_EXECUTING.search).length, 'the mutation finds its text in bank.py exactly once').toBe(2)
  writeFileSync(join(dir, 'bank.py'), source.replace(CLAIM_AFTER_EXECUTING.search, CLAIM_AFTER_EXECUTING.replace))
  copyFileSync(join(example, 'canonical.py'), join(dir, 'canonical.py'))
  return join(dir, 'bank.py')
}

/** Checks of stages 0..n that need more than the HTTP contract: what --server must skip. */
const needingMore = (stage: number, own = false) =>
  Array.from({ length: stage + 1 }, (_, n) => n)
    .filter((n) => !own || n === stage)
    .flatMap((n) =>
      checksFor(n)
        .filter((c) => c.needs)
        .map((c) => c.id),
    )

function expectGreen(result: GradeResult, skipped: string[]) {
  const failed = result.checks.filter((c) => !c.passed).map((c) => `${c.id}: ${c.message}`)
  expect(failed).toEqual([])
  expect(
    result.checks
      .filter((c) => c.status === 'skipped')
      .map((c) => c.id)
      .sort(),
  ).toEqual([...skipped].sort())
  expect(result.checks.filter((c) => c.status === 'skipped').every((c) => c.points === 0 && c.maxPoints === 0)).toBe(true)
  expect(result.passed && result.score === result.maxScore && result.maxScore > 0).toBe(true)
  expect(result.rerun).toContain("--server 'python3 ")
}

describe.skipIf(!hasPython)('grading a Python server with --server', () => {
  // Stage 5's own checks here, stage 0 with stage 1: the full stage-5 grade (every stage) takes
  // about 80 s on its own, and is the README's --repeat 10 line.
  it("passes stage 5's own checks (seed 5005)", { timeout: 90_000 }, async () => {
    const scratch = scratchDir('foreign')
    try {
      const server = parseServerCommand('python3 examples/python/bank.py', repoRoot)
      const result = await gradeIn(scratch.path, { stage: 5, seed: 5005, server, sandbox, noRegression: true })
      expectGreen(result, needingMore(5, true))
      // Its core holds one call alone (holdNext, letGo): the histories' takeovers and superseded requests ran on it.
      expect(result.checks.find((c) => c.id === 'histories-5')?.notes.join('\n')).not.toMatch(/no request held alone/)
    } finally {
      scratch.dispose()
    }
  })

  it('passes stage 1 with stage 0 as regression (seed 1001)', { timeout: 90_000 }, async () => {
    const scratch = scratchDir('foreign')
    try {
      const server = parseServerCommand('python3 examples/python/bank.py', repoRoot)
      const result = await gradeIn(scratch.path, { stage: 1, seed: 1001, server, sandbox })
      expectGreen(result, needingMore(1))
    } finally {
      scratch.dispose()
    }
  })

  it('a copy that claims after executing fails the concurrency checks with their usual message', { timeout: 60_000 }, async () => {
    const scratch = scratchDir('foreign')
    try {
      const server = parseServerCommand(`python3 ${brokenCopy(scratch.path)}`, repoRoot)
      const only = ['simultaneous-retries', 'two-instances-one-database']
      const result = await gradeIn(scratch.path, { stage: 1, seed: 1001, server, sandbox, only })
      expect(result.checks.map((c) => [c.id, c.status])).toEqual(only.map((id) => [id, 'fail']))
      // two-instances-one-database says how the copies were split over its processes (", split 8 and 2 over 2 processes on one database,").
      for (const check of result.checks)
        expect(check.message).toMatch(
          /simultaneous requests with one Idempotency-Key(, split \d+( and \d+)+ over \d+ processes on one database,)? moved the money ([2-9]|[1-9]\d+) times/,
        )
    } finally {
      scratch.dispose()
    }
  })
})
