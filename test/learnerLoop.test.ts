// The learner's loop, as a learner drives it from the terminal: one check
// (--only), one stage (--no-regression), hints one at a time, the server of a
// failure kept up (--keep), serve --demo, a recorded watch session, and the
// start-up rules (a slow start waited for and named, a crash reported once).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join, resolve } from 'node:path'
import { request } from 'undici'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { printSummary } from '#grader/output/report.ts'
import { firstError } from '#grader/engine/startFailure.ts'
import { inEnglish, runCliDirectly, startGradeCli } from './helpers/cli.ts'
import { expectNothingLeft } from './helpers/leftovers.ts'
import { pidAlive, waitFor } from './helpers/procs.ts'
import { gradeIn, scratchDir } from './helpers/scratch.ts'

const stage0 = stageByNumber(0)
const stage1 = stageByNumber(1)
const scratch = scratchDir('loop')
/** The check lines of a grade's output: "✓ title [id]" or "✗ title [id]". */
const checkIds = (out: string) => [...out.matchAll(/^ {2}[✓✗] .* \[([a-z0-9-]+)\]/gm)].map((m) => m[1])

afterAll(() => scratch.disposeExpectingNoneLeft())

function tmp(label: string) {
  const dir = join(scratch.path, label)
  mkdirSync(dir, { recursive: true })
  return dir
}

/** A checkout holding stage 0's learner file with `text`. */
function stage0Checkout(label: string, text: string) {
  const root = tmp(label)
  const dir = join(root, 'stages', stage0.folder)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'suspectedDuplicates.ts'), text)
  return { root, file: join(dir, 'suspectedDuplicates.ts') }
}
const starterQuery = readFileSync(resolve(repoRoot, 'stages', stage0.folder, 'suspectedDuplicates.ts'), 'utf8')
const solvedQuery = readFileSync(resolve(repoRoot, 'solutions', stage0.folder, 'suspectedDuplicates.ts'), 'utf8')

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  const { port } = server.address() as { port: number }
  await new Promise((done) => server.close(done))
  return port
}

/** Runs one shell line the way a learner pastes it. */
function sh(line: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((done, reject) => {
    const child = spawn('sh', ['-c', line], { env: { ...process.env, ...env } })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c))
    child.on('close', (code) => (code === 0 ? done(out) : reject(new Error(`${line} exited ${code}`))))
  })
}

describe.concurrent('narrower grades', () => {
  it('--only ID (twice) runs exactly those checks, and points at the full grade next', async ({ expect }) => {
    const run = await runCliDirectly(['0', '--solution', '--seed', '3', '--only', 'bad-input', '--only', 'bank-basics'], tmp('only'))
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(checkIds(run.stdout)).toEqual(['bank-basics', 'bad-input'])
    expect(run.stdout).toMatch(/PASSED {2}stage 0 score 9\/9 · 2 of 2 checks/)
    expect(run.stdout).toContain('next: the full grade, earlier stages included: npm run grade -- 0')
  })

  it('--only with an unknown id, or with --json, is refused before anything starts', async ({ expect }) => {
    const unknown = await runCliDirectly(['0', '--only', 'no-such-check'], tmp('only-unknown'))
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/--only no-such-check: no such check up to stage 0\. Checks: bank-basics, /)
    const json = await runCliDirectly(['0', '--only', 'bank-basics', '--json', join(scratch.path, 'x.json')], tmp('only-json'))
    expect(json.code).toBe(2)
    expect(json.stderr).toContain('--json records full grades only')
  })

  it("--no-regression runs the stage's own checks and none of the earlier stages'", async ({ expect }) => {
    const run = await runCliDirectly(['1', '--solution', '--seed', '3', '--no-regression'], tmp('no-regression'))
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(checkIds(run.stdout)).toEqual(stage1.checks)
    expect(run.stdout).not.toContain('(regression)')
    expect(run.stdout).toContain(`PASSED  stage 1 score ${stage1.points}/${stage1.points}`)
    expect(run.stdout).toContain('next: the full grade, earlier stages included: npm run grade -- 1')
  })

  it('a passing full grade names the next stage and its command', async ({ expect }) => {
    const run = await runCliDirectly(['0', '--solution', '--seed', '3'], tmp('next'))
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(run.stdout).toContain(`next: stage 1 · ${stage1.title}: read stages/${stage1.folder}/README.md, then npm run grade -- 1`)
  })
})

describe('npm run hint', () => {
  it('reveals one more hint per call, and remembers how many under LAB_HOME', async () => {
    const home = tmp('hints')
    const hint = () => sh(`npm run --silent hint -- 0`, { ...inEnglish(home), FORCE_COLOR: '0' })
    const [h1, h2, h3] = stage0.hints
    const first = await hint()
    expect(first).toContain(`hint 1 of ${stage0.hints.length}`)
    expect(first).toContain(`1. ${h1}`)
    expect(first).not.toContain(h2!)
    expect(first).toContain('next: npm run hint -- 0 shows hint 2')
    const second = await hint()
    expect(second).toContain(`1. ${h1}`)
    expect(second).toContain(`2. ${h2}`)
    expect(second).not.toContain(h3!)
    expect(JSON.parse(readFileSync(join(home, 'hints.json'), 'utf8'))).toEqual({ [stage0.slug]: 2 })
  })
})

describe('--keep', () => {
  it("leaves the failing check's server up with its state, and prints how to reach it and how to stop it", async () => {
    const dir = tmp('keep')
    const { root } = stage0Checkout('keep-checkout', starterQuery)
    const run = await runCliDirectly(['0', '--dir', root, '--seed', '3', '--keep', '--only', 'suspected-duplicates'], dir)
    expect(run.code, run.stdout + run.stderr).toBe(1)
    const field = (name: string) => new RegExp(`^ {2}${name}: +(.+)$`, 'm').exec(run.stdout)?.[1]
    const url = field('url')!
    const token = field('admin token')!
    const stop = field('stop it')!
    expect(url, run.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const clients = [...run.stdout.matchAll(/^ {2}client \S+: api key (sk_\w+), accounts (.+)$/gm)]
    expect(clients.length, run.stdout).toBe(2) // the story's payer and payee
    // The state that failed is still there: the story's three rows, from the printed payer account.
    const payer = clients.find((c) => c[2]!.split(', ').length === 1)![2]!
    const res = await request(`${url}/admin/ledger`, { headers: { Authorization: `Bearer ${token}` } })
    const ledger = (await res.body.json()) as { entries: Array<{ from: string | null }> }
    expect(res.statusCode).toBe(200)
    expect(ledger.entries.filter((e) => e.from === payer)).toHaveLength(3)
    // It outlived the grader, and the printed line stops it and removes its folders.
    const pid = Number(/kill -TERM -(\d+)/.exec(stop)![1])
    expect(pidAlive(pid)).toBe(true)
    await sh(stop)
    await expectNothingLeft('left behind by the run', dir)
    for (const folder of stop.split(' && rm -rf ')[1]!.split(' ')) expect(existsSync(folder), folder).toBe(false)
  })
})

describe('npm run serve -- 0 --demo', () => {
  it('creates a funded client and prints curl lines that work as pasted, logging one line per request', async () => {
    const dir = tmp('serve')
    const port = await freePort()
    // LAB_DB inside this test's folder: the repo's own database stays untouched, and the path marks the server.
    const serve = startGradeCli(['0', '--demo', '--port', String(port)], dir, ['npm', 'run', '--silent', 'serve', '--'], { LAB_DB: join(dir, 'bank.sqlite') })
    try {
      await waitFor(() => (serve.output().includes('# 3. the ledger') ? true : undefined), 'the demo lines', 120_000)
      const lines = serve.output().split('\n')
      const transfer = lines.find((l) => l.startsWith('curl -si -X POST'))!
      const ledger = lines.find((l) => l.startsWith(`curl -s http://127.0.0.1:${port}/admin/ledger`))!
      expect(transfer).toContain(`http://127.0.0.1:${port}/transfers`)
      // Stage 0 has no idempotency layer: the retry moves the money again.
      expect(await sh(transfer)).toMatch(/^HTTP\/1\.1 201/)
      expect(await sh(transfer)).toMatch(/^HTTP\/1\.1 201/)
      const from = /"from":"(acc_[\w-]+)"/.exec(transfer)![1]
      const book = JSON.parse(await sh(ledger)) as { entries: Array<{ from: string | null }> }
      expect(book.entries.filter((e) => e.from === from)).toHaveLength(2)
      // The log line is written when the answer has gone out: the ledger's may follow its curl by a moment.
      await waitFor(() => (/GET \/admin\/ledger → 200 /.test(serve.output()) ? true : undefined), 'the ledger request log line')
      expect(serve.output().match(/POST \/transfers → 201 /g)).toHaveLength(2)
    } finally {
      process.kill(-serve.child.pid!, 'SIGINT')
      await serve.done
    }
    await expectNothingLeft('left behind by the run', dir)
  })
})

describe('npm run watch -- 0', () => {
  it('a recorded session: first grade fails, the file is saved, the regrade passes and names the next stage; Ctrl-C leaves nothing', async () => {
    const dir = tmp('watch')
    const { root, file } = stage0Checkout('watch-checkout', starterQuery)
    const watch = startGradeCli(['0', '--dir', root, '--seed', '5'], dir, ['npm', 'run', '--silent', 'watch', '--'])
    /** How many verdicts so far: each ends with the "watching …" line. */
    const watching = () =>
      watch
        .output()
        .split('\n')
        .filter((l) => l.startsWith('watching ')).length
    try {
      await waitFor(() => (watching() === 1 ? true : undefined), 'the first verdict', 120_000)
      const first = watch.output()
      expect(first).toContain('──── first grade ────')
      expect(first).toMatch(/✗ .* \[suspected-duplicates\]/)
      expect(first).toContain('FAILED  stage 0 score 25/30')
      writeFileSync(file, solvedQuery) // the learner saves the fixed query
      await waitFor(() => (watching() === 2 ? true : undefined), 'the verdict after the save', 120_000)
      const second = watch.output().slice(first.length)
      expect(second).toContain('──── suspectedDuplicates.ts changed ────')
      expect(checkIds(second)).toEqual(stage0.checks)
      expect(second).toContain('PASSED  stage 0 score 30/30')
      expect(second).toContain(`next: stage 1 · ${stage1.title}`)
    } finally {
      process.kill(-watch.child.pid!, 'SIGINT')
      await watch.done
    }
    await expectNothingLeft('left behind by the run', dir)
  })

  it("a green run from stage 2 on says nothing of checks not run (the earlier stages' histories never run as regression)", async () => {
    const dir = tmp('watch-green')
    const watch = startGradeCli(['2', '--solution', '--seed', '5'], dir, ['npm', 'run', '--silent', 'watch', '--'])
    try {
      await waitFor(() => (watch.output().includes('\nwatching ') ? true : undefined), 'the first verdict', 120_000)
      const out = watch.output()
      expect(out).toContain(`PASSED  stage 2 score ${stageByNumber(2).points}/${stageByNumber(2).points}`)
      expect(out).not.toContain('stopped at the first failure')
    } finally {
      process.kill(-watch.child.pid!, 'SIGINT')
      await watch.done
    }
    await expectNothingLeft('left behind by the run', dir)
  })

  it('stops at the first failure, saying how many checks it did not run', async () => {
    const dir = tmp('watch-stop')
    // Stage 1's untouched starter: its first check fails; the rest wait.
    const watch = startGradeCli(['1', '--seed', '5'], dir, ['npm', 'run', '--silent', 'watch', '--'])
    try {
      await waitFor(() => (watch.output().includes('\nwatching ') ? true : undefined), 'the first verdict', 120_000)
      const out = watch.output()
      expect(checkIds(out)).toEqual([stage1.checks[0]])
      const total = stage1.checks.length + stage0.checks.length
      expect(out).toContain(`stopped at the first failure: ${total - 1} check(s) not run (--all runs them all)`)
    } finally {
      process.kill(-watch.child.pid!, 'SIGINT')
      await watch.done
    }
    await expectNothingLeft('left behind by the run', dir)
  })
})

describe('start-up', () => {
  it('a server that is alive and slow to start is waited for, passes, and the report says how long it took', async () => {
    const dir = tmp('slow')
    const result = await gradeIn(dir, {
      stage: 0,
      seed: 3,
      source: { kind: 'solution' },
      only: ['bank-basics'],
      entry: resolve(repoRoot, 'test', 'scenarios', 'slow-start.ts'),
    })
    expect(result.checks.map((c) => [c.id, c.status])).toEqual([['bank-basics', 'pass']])
    expect(result.serverStartMs).toBeGreaterThanOrEqual(6_000) // a lower bound: the scenario sleeps 6 s
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    try {
      printSummary(result)
      expect(log.mock.calls.flat().join('\n')).toMatch(/the server took \d+\.\d s to start \(a busy machine; no check's time limit counts it\)/)
    } finally {
      log.mockRestore()
    }
  })

  it("firstError finds the first error and the learner's file:line in what a failed start printed", () => {
    const compile =
      'Error [TransformError]: Transform failed with 1 error:\n/x/stages/01-unique-key/idempotency.ts:21:10: ERROR: Unexpected "="\n    at failureErrorWithLog (/r/node_modules/esbuild/lib/main.js:1752:15)'
    expect(firstError(compile)).toBe('/x/stages/01-unique-key/idempotency.ts:21:10: Unexpected "="')
    const thrown = [
      'file:///x/stages/01-unique-key/keyStore.ts:12',
      "TypeError: Cannot read properties of undefined (reading 'prepare')",
      '    at createKeyStore (/r/node_modules/some-lib/index.js:3:1)',
      '    at createKeyStore (file:///x/stages/01-unique-key/keyStore.ts:12:20)',
      '    at node:internal/modules/esm/module_job:325:25',
    ].join('\n')
    expect(firstError(thrown)).toBe("/x/stages/01-unique-key/keyStore.ts:12:20: TypeError: Cannot read properties of undefined (reading 'prepare')")
    expect(firstError('scenario never-listens: warming up forever')).toBeUndefined()
  })
})
