// A failing history's replay script (grader/model/timelineReplay.ts), run for
// real: `npm run serve -- 5 --solution --fresh --clock MS` as the script's
// header says, then the script with the admin token serve printed. It makes
// the history's clients and accounts, sends every request with the new keys
// and ids, holds the core and releases it, moves the clock, kills the server
// (which the test starts again, as the script asks), holds one call alone and
// lets it fail: each answer is the one the solution gives at that moment.
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { LAUNCHER } from '#harness/commands.ts'
import { repoRoot } from '#harness/paths.ts'
import type { SendOp } from '#grader/model/history.ts'
import type { HistoryRun } from '#grader/model/runHistory.ts'
import { timelineScript } from '#grader/model/timeline.ts'
import { A, B, recordedPost, sendStep } from './helpers/historyParties.ts'
import { inEnglish } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('replay')
afterAll(() => scratch.disposeExpectingNoneLeft('left behind by the replayed servers'))

const T0 = 1_767_225_600_000
const K0 = 'c1a7e0f2-1111-4aaa-8bbb-000000000000'
const K1 = 'c1a7e0f2-2222-4aaa-8bbb-000000000000'
const post = (path: string, key: string, body: unknown) => recordedPost('/tmp/idem-lab-gone/bank.sock', path, A, key, JSON.stringify(body))
const op = (key: 0 | 1, more: Partial<SendOp> = {}) => sendStep(0, key, more)
const TRANSFER = { from: A.accounts[0], to: B.accounts[0], amount: 500 }
const pays = (key: string) => post('/transfers', key, TRANSFER)

const RUN: HistoryRun = {
  parties: [A, B],
  steps: [
    { index: 1, instance: 0, key: 'k0', what: 'client A /transfers intent 0 k0', answer: '201', exchange: pays(K0), op: op(0), at: T0 },
    { index: 2, instance: 0, key: undefined, what: 'the core holds', answer: 'the core holds every call', op: { op: 'hold', instance: 0 }, at: T0 },
    { index: 3, instance: 0, key: 'k1', what: 'client A /transfers intent 0 k1', answer: 'held in the core', exchange: pays(K1), op: op(1), at: T0 },
    {
      index: 4,
      instance: undefined,
      key: undefined,
      what: "the clock moves to k1's lease-end",
      answer: '',
      clock: "+30000 ms (k1's lease-end)",
      op: { op: 'clock', to: 'lease-end', key: 1 },
      at: T0 + 30_000,
    },
    { index: 5, instance: 0, key: undefined, what: 'the core releases', answer: 'k1: 201', op: { op: 'release', instance: 0 }, at: T0 + 30_000 },
    { index: 6, instance: 0, key: 'k0', what: 'client A /transfers intent 0 k0', answer: '201, replayed', exchange: pays(K0), op: op(0), at: T0 + 30_000 },
    { index: 7, instance: 0, key: undefined, what: 'SIGKILL and restart', answer: 'SIGKILL, restarted', op: { op: 'crash', instance: 0 }, at: T0 + 30_000 },
    { index: 8, instance: 0, key: 'k0', what: 'client A /transfers intent 0 k0', answer: '201, replayed', exchange: pays(K0), op: op(0), at: T0 + 30_000 },
    {
      index: 9,
      instance: 0,
      key: 'k1',
      what: 'client A /deposits intent 1 k1, its core call held alone',
      answer: 'held alone in the core',
      exchange: post('/deposits', K1, { to: A.accounts[1], amount: 700 }),
      op: op(1, { intent: 1, holdAlone: true }),
      at: T0 + 30_000,
    },
    {
      index: 10,
      instance: 0,
      key: 'k1',
      what: "the core lets k1's held request fail (503): step 9's request",
      answer: 'k1: 503 core-unavailable',
      op: { op: 'let-go', key: 1, fails: true },
      at: T0 + 30_000,
    },
    {
      index: 11,
      instance: 0,
      key: 'k0',
      what: 'client A /transfers intent 0 k0, amount changed',
      answer: '201',
      exchange: post('/transfers', K0, { ...TRANSFER, amount: 600 }),
      op: op(0, { change: 'amount' }),
      at: T0 + 30_000,
    },
  ],
  mismatch: { step: 11, expected: '422 idempotency-key-reused', got: '201' },
}
const SHOWN = { run: RUN, stage: 5, seed: 7, instances: ['bank'], rerun: 'npm run grade -- 5 --seed 7 --only histories-5' }

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

type Served = { child: ChildProcess; out: () => string; token: Promise<string>; up: Promise<void>; exited: Promise<void> }

/** npm run serve -- 5 --solution …, its database in the test's scratch folder (which marks its processes). */
function serve(args: string[], env: Record<string, string> = {}): Served {
  const child = spawn(process.execPath, [LAUNCHER, 'grader/cli/serve.ts', '5', '--solution', ...args], {
    cwd: repoRoot,
    env: { ...process.env, LAB_DB: join(scratch.path, 'bank.sqlite'), LAB_REQUEST_LOG: '0', TMPDIR: scratch.path, ...inEnglish(scratch.path), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const seen = (pattern: RegExp) =>
    new Promise<string>((resolve, reject) => {
      const look = () => {
        const m = pattern.exec(out)
        if (m) resolve(m[1] ?? m[0])
      }
      const read = (d: Buffer) => {
        out += d
        look()
      }
      child.stdout!.on('data', read)
      child.stderr!.on('data', read)
      child.on('exit', () => reject(new Error(`serve exited before ${pattern}:\n${out}`)))
    })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  return { child, out: () => out, token: seen(/admin token: (\S+)/), up: seen(/listening on http/).then(() => undefined), exited }
}

it('replays a history on npm run serve: clients, requests, a held core, the clock, a crash and a call let go', { timeout: 180_000 }, async () => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  let server = serve(['--fresh', '--port', String(port), '--clock', String(T0)])
  const servers = [server]
  try {
    const token = await server.token
    expect(token).toMatch(/^adm_[0-9a-f]{32}$/)
    await server.up
    expect(server.out()).toContain(`clock:       stands at ${T0}`)

    const script = spawn('sh', ['-s'], { env: { ...process.env, ADMIN: token, URL: url, TMPDIR: scratch.path }, stdio: ['pipe', 'pipe', 'pipe'] })
    script.stdin.end(timelineScript(SHOWN))
    let out = ''
    let err = ''
    script.stdout.on('data', (d) => (out += d))
    const restarted = new Promise<string>((resolve) =>
      script.stderr.on('data', (d) => {
        err += d
        // The script waits for the server killed at step 7: started again as it says, on the same database, its clock where it stood.
        const asked = /is down[^\n]*\n {2}(LAB_ADMIN_TOKEN=\S+ npm run serve -- 5 --port \d+ --clock (\d+))/.exec(err)
        if (asked && servers.length === 1) {
          server = serve(['--port', String(port), '--clock', asked[2]!], { LAB_ADMIN_TOKEN: token })
          servers.push(server)
          resolve(asked[1]!)
        }
      }),
    )
    const code = await new Promise<number | null>((resolve) => script.on('exit', resolve))
    expect(code, `${out}\n${err}`).toBe(0)
    expect(await restarted).toBe(`LAB_ADMIN_TOKEN=${token} npm run serve -- 5 --port ${port} --clock ${T0 + 30_000}`)

    /** What the replay printed for step n (its heading to the next one). */
    const part = (heading: string) => {
      const from = out.indexOf(heading)
      expect(from, `${heading} in\n${out}`).toBeGreaterThanOrEqual(0)
      const next = out.indexOf('\n=== step', from + heading.length)
      return out.slice(from, next < 0 ? undefined : next)
    }
    expect(out).toMatch(/client A: API key sk_\S+, accounts A0 acc_\S+ and A1 acc_\S+/)
    expect(out).not.toContain('sk_grade_')
    expect(part('=== step 1:')).toMatch(/HTTP\/1\.1 201 /)
    expect(part('=== step 1:')).toContain('"amount":500')
    // Step 3 waited in the held core: answered when step 5 released it (its lease ran out meanwhile; nobody took it over).
    expect(part('=== step 3:')).not.toContain('HTTP/1.1')
    expect(part('=== step 3, its answer:')).toMatch(/HTTP\/1\.1 (201|409) /)
    expect(part('=== step 4:')).toContain(`"nowMs":${T0 + 30_000}`)
    expect(part('=== step 6:')).toMatch(/HTTP\/1\.1 201 [\s\S]*idempotent-replayed: true/i)
    // After the crash and restart, the key is still remembered.
    expect(part('=== step 8:')).toMatch(/HTTP\/1\.1 201 [\s\S]*idempotent-replayed: true/i)
    expect(part('=== step 9, its answer:')).toMatch(/HTTP\/1\.1 503 /)
    expect(part('=== step 11:')).toMatch(/HTTP\/1\.1 422 [\s\S]*idempotency-key-reused/)
    expect(out).toContain('✗ step 11: the contract allows: 422 idempotency-key-reused')
  } finally {
    for (const s of servers) {
      if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM')
      await s.exited
    }
  }
})
