// Untrusted submissions: a roster of probe checkouts (test/fixtures/probes.ts)
// graded with the sandbox. Every probe must be blocked, and must score what
// the honest code it is built on scores; nothing may be left running.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { parse } from 'shell-quote'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import { rerunCommand } from '#grader/engine/rerun.ts'
import { findBwrap } from '#harness/sandbox.ts'
import { makeCheckout, makeProbe, makeStuckAtLimit, PROBE_STAGE, PROBES, type ProbeTargets } from '../fixtures/probes.ts'
import { expectNothingLeft } from '../helpers/leftovers.ts'
import { scratchDir } from '../helpers/scratch.ts'

type StageEntry = { stage: number; outcome: string; reason: string; result: { score: number; maxScore: number; checks: Array<{ message?: string }> } }
type RosterJson = { submissions: Array<{ learner: string; stages: StageEntry[] }> }

const bwrap = findBwrap()
if (!bwrap.path) console.warn(`test/sandbox.test.ts: the probe roster is skipped: ${bwrap.problem} (apt-get install bubblewrap)`)

describe.skipIf(!bwrap.path)('a roster of probe submissions, sandboxed', () => {
  it('blocks every probe; every probe scores what its honest code scores; nothing is left running', async () => {
    const scratch = scratchDir('sandbox')
    const listener = createServer((socket) => {
      connections++
      socket.destroy()
    })
    let connections = 0
    try {
      await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done))
      const roster = join(scratch.path, 'class')
      mkdirSync(roster)
      const secretFile = join(scratch.path, 'instructor-secret.txt')
      writeFileSync(secretFile, 'not for submissions\n')
      const store = join(scratch.path, 'grades.sqlite')
      const tag = `probe-tag-${randomBytes(6).toString('hex')}`
      const targets: ProbeTargets = {
        secretFile,
        otherCheckoutFile: join(makeCheckout(roster, 'solved', PROBE_STAGE.number), 'stages', PROBE_STAGE.folder, 'idempotency.ts'),
        secretEnv: `planted-${randomBytes(8).toString('hex')}`,
        port: (listener.address() as AddressInfo).port,
        storePath: store,
        tag,
      }
      makeCheckout(roster, 'untouched')
      for (const probe of PROBES) makeProbe(roster, probe, targets)
      makeStuckAtLimit(roster, 'stuck-at-limit')

      const json = join(scratch.path, 'roster.json')
      const args = [String(PROBE_STAGE.number), '--roster', roster, '--store', store, '--json', json, '--jobs', '3', '--seed', '7']
      // The stuck server holds its grade for the start-up ceiling: 30 s, not the default 60.
      const run = await npm(scratch.path, args, { LAB_PROBE_SECRET: targets.secretEnv, LAB_START_TIMEOUT_S: '30' })
      expect(run.code, run.out).toBe(0)
      expect(run.out).toContain('sandboxed')

      // Nothing a probe started survives the batch (the rewriters would go on for 20 s).
      await expectNothingLeft('left behind by the batch', tag, scratch.path)

      // One stage graded: each learner's entry for it.
      const scores = new Map(
        (JSON.parse(readFileSync(json, 'utf8')) as RosterJson).submissions.map((s) => [s.learner, s.stages.find((e) => e.stage === PROBE_STAGE.number)!]),
      )
      const honest = scores.get('solved')!.result.score
      const starter = scores.get('untouched')!.result.score
      expect(honest, `the solution must outscore the starter, or import-solution proves nothing\n${run.out}`).toBeGreaterThan(starter)
      const expected = Object.fromEntries(PROBES.map((p) => [p, p === 'import-solution' ? starter : honest]))
      const got = Object.fromEntries(PROBES.map((p) => [p, scores.get(p)?.result.score]))
      expect(got, run.out).toEqual(expected)
      expect([...scores].filter(([, s]) => s.outcome !== 'graded').map(([learner, s]) => `${learner}: ${s.reason}`)).toEqual([])
      // Stuck at the process limit while starting: graded, nothing earned, and the limit named (not a time limit, not a crash).
      const stuck = scores.get('stuck-at-limit')!
      expect(stuck.result.score, run.out).toBe(0)
      expect(stuck.result.checks[0]?.message, run.out).toMatch(
        /^the server did not start: it (was refused a new process or thread|runs \d+ processes and threads, at its limit).*LAB_LIMITS=procs=/,
      )

      // The store holds what the graders sent, not what a probe wrote.
      const db = new Database(store, { readonly: true })
      const stored = Object.fromEntries(
        (db.prepare('SELECT learner, score FROM runs').all() as Array<{ learner: string; score: number }>).map((r) => [r.learner, r.score]),
      )
      db.close()
      expect(stored).toEqual(Object.fromEntries([...scores].map(([learner, s]) => [learner, s.result.score])))

      expect(connections, 'connections that reached the test listener').toBe(0)
      expect(run.out, 'lines written into the roster terminal').not.toContain('forged-by-a-probe')
    } finally {
      listener.close()
      scratch.dispose()
    }
    // Twelve stage-1 grades, three at a time: about 130 s on a quiet two-core machine.
  }, 400_000)
})

describe('rerun lines', () => {
  const hostile = '/tmp/class/bob; touch x #'
  const rerun = rerunCommand(1, 7, { kind: 'dir', path: hostile })

  it('shell-quote the folder: pasted, the shell sees exactly the grader arguments', () => {
    // The terminal, the JSON result and the HTML report (escaped) all carry this one string.
    expect(parse(rerun)).toEqual(['npm', 'run', 'grade', '--', '1', '--seed', '7', '--dir', hostile])
  })
})

/** `npm run grade -- args` with TMPDIR in the scratch folder (the marker of every process it starts). */
function npm(tmp: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((done) => {
    const child = spawn('npm', ['run', '--silent', 'grade', '--', ...args], { cwd: repoRoot, env: { ...process.env, ...env, TMPDIR: tmp, FORCE_COLOR: '0' } })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c))
    child.stderr.on('data', (c: Buffer) => (out += c))
    child.on('close', (code) => done({ code, out }))
  })
}
