// The resource limits on learner code (harness/limits.ts): the instructor's
// override, the sentences a report gives, and probe scripts
// (test/fixtures/limitProbes.ts) run through sandboxed() directly, each going
// past one limit. A probe checks first that its limit is in force and skips
// otherwise; the test kills whatever is left in `finally`.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, type TestContext } from 'vitest'
import { classifyFailure, type ServerView } from '#grader/classifyFailure.ts'
import { startFailureMessage } from '#grader/startFailure.ts'
import { DEFAULT_LIMITS, endFromText, findPrlimit, LimitsError, type Limits, limitVerdict, parseLimits, prlimitArgs } from '#harness/limits.ts'
import { findBwrap, sandboxed } from '#harness/sandbox.ts'
import { cpuProbe, fileSizeProbe, type LimitProbe, memoryProbe, procsProbe } from './fixtures/limitProbes.ts'
import { scratchDir } from './helpers/scratch.ts'

describe('LAB_LIMITS', () => {
  it('is the defaults when unset or empty, and off when "off"', () => {
    expect(parseLimits(undefined)).toEqual(DEFAULT_LIMITS)
    expect(parseLimits('  ')).toEqual(DEFAULT_LIMITS)
    expect(parseLimits('off')).toBeUndefined()
  })

  it('replaces the limits it names and keeps the others', () => {
    expect(parseLimits('memory=2048, procs=128,cpu=30')).toEqual({ ...DEFAULT_LIMITS, memoryMb: 2048, procs: 128, cpuSeconds: 30 })
    expect(parseLimits('files=64,filesize=10')).toEqual({ ...DEFAULT_LIMITS, files: 64, fileSizeMb: 10 })
  })

  it.each([
    ['memory=2G'],
    ['memory=0'],
    ['memory=-5'],
    ['ram=2048'],
    ['memory'],
    ['memory=2048;procs=64'],
    ['procs=64,procs=65'],
    ['cpu=1.5'],
    ['memory=99999999999999999999'],
    ['memory=2048,'],
  ])('refuses %j', (text) => {
    expect(() => parseLimits(text)).toThrow(LimitsError)
  })

  it('becomes prlimit options: memory as RLIMIT_DATA, CPU with 5 s between SIGXCPU and SIGKILL, no core dumps', () => {
    expect(prlimitArgs({ memoryMb: 1, procs: 2, files: 3, fileSizeMb: 4, cpuSeconds: 5 })).toEqual([
      '--data=1048576',
      '--nproc=2',
      '--nofile=3',
      '--fsize=4194304',
      '--cpu=5:10',
      '--core=0',
    ])
  })
})

describe('the sentence that names a limit', () => {
  const limits: Limits = { ...DEFAULT_LIMITS, memoryMb: 300, cpuSeconds: 60, procs: 40, files: 100, fileSizeMb: 16 }
  const noCap = {}

  it.each([
    [{ signal: 'SIGXCPU' }, 'the server used more than 60 s of CPU time'],
    [{ code: 152 }, 'the server used more than 60 s of CPU time'],
    [{ signal: 'SIGXFSZ' }, 'the server wrote a file larger than 16 MB'],
    [{ code: 1, log: "Error: EFBIG: file too large, write\n  code: 'EFBIG'" }, 'the server wrote a file larger than 16 MB'],
    [{ code: 1, log: 'RangeError: Array buffer allocation failed' }, 'the server used more than 300 MB of memory'],
    [{ code: 134, log: "terminate called after throwing an instance of 'std::bad_alloc'" }, 'the server used more than 300 MB of memory'],
    [{ code: 1, log: 'Error: Cannot allocate memory' }, 'the server used more than 300 MB of memory'],
    [
      { code: 134, log: 'FATAL ERROR: Committing semi space failed. Allocation failed - JavaScript heap out of memory' },
      'the server used more than 300 MB of memory',
    ],
    [{ code: 134, log: ' 6: 0x1112175 v8::internal::Heap::PerformGarbageCollection(…) [/usr/bin/node]' }, 'the server used more than 300 MB of memory'],
    [{ code: 1, log: 'Error: spawn /usr/bin/node EAGAIN' }, 'the server started more than 40 processes or threads'],
    [{ code: 1, log: 'Error: EMFILE: too many open files' }, 'the server had more than 100 files open at once'],
    [{ code: 139 }, 'the server crashed (SIGSEGV)'],
  ])('%j: %s', (end, sentence) => {
    expect(limitVerdict(end, limits, 'the server', noCap)).toMatch(new RegExp(`^${sentence.replace(/[()]/g, '\\$&')}`))
  })

  it('names nothing for an ordinary crash, a bare SIGKILL (the grader sends it too), or an exit of its own', () => {
    expect(limitVerdict({ code: 1, log: 'TypeError: x is not a function' }, limits, 'the server', noCap)).toBeUndefined()
    expect(limitVerdict({ signal: 'SIGKILL' }, limits, 'the server', noCap)).toBeUndefined()
    expect(limitVerdict({ code: 0 }, limits, 'the server', noCap)).toBeUndefined()
  })

  it("names Node's heap cap for a heap that outgrew it, with or without limits", () => {
    const log = 'FATAL ERROR: Ineffective mark-compacts near heap limit Allocation failed - JavaScript heap out of memory'
    const roster = { NODE_OPTIONS: '--max-old-space-size=512' }
    expect(limitVerdict({ code: 134, log }, { ...limits, memoryMb: 1024 }, 'the server', roster)).toMatch(/grew past 512 MB, Node's heap cap/)
    expect(limitVerdict({ code: 134, log: 'FATAL ERROR: Reached heap limit Allocation failed' }, limits, 'the server', noCap)).toMatch(
      /^the server ran out of memory: its JavaScript heap grew past Node's heap cap/,
    )
    expect(limitVerdict({ code: 134, log }, undefined, 'the server', noCap)).toMatch(/heap cap/)
    expect(limitVerdict({ signal: 'SIGXCPU' }, undefined, 'the server', noCap)).toBeUndefined()
  })

  it('reads how ServerProcess words an exit', () => {
    expect(endFromText('the server killed by SIGXCPU during')).toMatchObject({ signal: 'SIGXCPU', code: null })
    expect(endFromText('the server exited with code 152 before it listened.')).toMatchObject({ signal: null, code: 152 })
  })
})

const prlimit = findPrlimit()
const reports = describe.skipIf(!prlimit)

reports('the reports (with prlimit, under the default limits)', () => {
  it('a server that died of a limit while starting: the first check names it', () => {
    const reason = 'the server exited with code 1 before it listened.\nRangeError: Array buffer allocation failed\n    at /x/stages/05/a.ts:3:9'
    expect(startFailureMessage(reason)).toMatch(
      new RegExp(
        `^the server did not start: it used more than ${DEFAULT_LIMITS.memoryMb} MB of memory, the limit for learner code \\(LAB_LIMITS=memory=… changes it\\)\\n`,
      ),
    )
    expect(startFailureMessage('the server exited with code 1 before it listened.\nTypeError: nope')).not.toMatch(/limit/)
  })

  it('a server that died of a limit during a check: the message names it', () => {
    const dead: ServerView = { unexpectedExit: 'exited with code 152', logTail: () => 'listening on unix:/x.sock' }
    const healthy: ServerView = { unexpectedExit: undefined, logTail: () => 'listening on unix:/y.sock' }
    const got = classifyFailure(new Error('socket hang up'), [healthy, dead], { recorded: [], unanswered: [] })
    expect(got.message).toBe(
      `socket hang up (the server exited with code 152 during this check: it used more than ${DEFAULT_LIMITS.cpuSeconds} s of CPU time, the limit for learner code (LAB_LIMITS=cpu=… changes it))`,
    )
  })
})

const bwrap = findBwrap()
if (!bwrap.path || !prlimit) console.warn(`test/limits.test.ts: the probes are skipped: ${bwrap.problem ?? 'prlimit (util-linux) is not installed'}`)

type Ended = { code: number | null; signal: NodeJS.Signals | null; out: string }

/**
 * Runs `probe` through sandboxed() under `limits`, and returns how it ended.
 * `asUser`: as root, run the sandbox as that unprivileged uid (setpriv), the
 * way a grader that is not root runs it.
 */
async function runProbe(probe: LimitProbe, limits: Limits, o: { graceful?: boolean; asUser?: number } = {}): Promise<Ended> {
  const scratch = scratchDir('limits')
  const dir = join(scratch.path, 'probe')
  const data = join(scratch.path, 'data')
  mkdirSync(dir)
  mkdirSync(data)
  chmodSync(scratch.path, 0o755)
  if (o.asUser !== undefined) spawnSync('chown', [String(o.asUser), data])
  const fill = probe.source.replaceAll('@DATA@', data)
  writeFileSync(join(dir, probe.file), fill)
  const command = sandboxed(
    { readOnly: [dir], writable: [data] },
    { NODE_ENV: 'test', PROBE_REAL_UID: String(o.asUser ?? process.getuid?.()) },
    [process.execPath, join(dir, probe.file)],
    {
      graceful: o.graceful,
      limits,
    },
  )
  const [file, args] =
    o.asUser === undefined
      ? [command.file, command.args]
      : ['setpriv', [`--reuid=${o.asUser}`, `--regid=${o.asUser}`, '--clear-groups', '--', command.file, ...command.args]]
  const child = spawn(file, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (c: Buffer) => (out += c))
  child.stderr.on('data', (c: Buffer) => (out += c))
  // Only a safety net, not an assertion: a probe that is not stopped ends on its own bound long before.
  const safety = setTimeout(() => kill(child.pid), 90_000)
  try {
    return await new Promise<Ended>((done) => child.once('close', (code, signal) => done({ code, signal, out })))
  } finally {
    clearTimeout(safety)
    kill(child.pid)
    scratch.dispose()
  }
}

function kill(pid: number | undefined) {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // already gone
  }
}

/** Skips the test with the probe's own message when its limit was not in force. */
function skipIfSkipped(ctx: TestContext, ended: Ended) {
  const skip = /^skip: .*$/m.exec(ended.out)
  if (skip) {
    console.warn(`test/limits.test.ts: ${skip[0]}`)
    ctx.skip()
  }
}

const probes = describe.skipIf(!bwrap.path || !prlimit)

probes('probes past each limit, sandboxed', () => {
  it('off-heap memory past the limit: stopped, and named', { timeout: 120_000 }, async (ctx) => {
    const limits = { ...DEFAULT_LIMITS, memoryMb: 256 }
    const ended = await runProbe(memoryProbe(256), limits)
    skipIfSkipped(ctx, ended)
    expect(ended.out).toContain('probe: allocating past 256 MB')
    expect(ended.out).not.toContain('not stopped')
    expect(ended.code, ended.out).not.toBe(0)
    expect(limitVerdict({ ...ended, log: ended.out }, limits)).toMatch(/^the server used more than 256 MB of memory/)
  })

  it('a file past the size limit: stopped, and named', { timeout: 120_000 }, async (ctx) => {
    const limits = { ...DEFAULT_LIMITS, fileSizeMb: 8 }
    const ended = await runProbe(fileSizeProbe(8, '@DATA@'), limits)
    skipIfSkipped(ctx, ended)
    expect(ended.out).toContain('probe: writing a file past 8 MB')
    expect(ended.out).not.toContain('not stopped')
    expect(ended.code, ended.out).not.toBe(0)
    expect(limitVerdict({ ...ended, log: ended.out }, limits)).toMatch(/^the server wrote a file larger than 8 MB/)
  })

  it('CPU past the limit, through the graceful wrapper (sh, bwrap, prlimit): SIGXCPU, and named', { timeout: 120_000 }, async (ctx) => {
    const limits = { ...DEFAULT_LIMITS, cpuSeconds: 2 }
    const ended = await runProbe(cpuProbe(2), limits, { graceful: true })
    skipIfSkipped(ctx, ended)
    expect(ended.out).toContain('probe: spinning past 2 s of CPU')
    expect(ended.out).not.toContain('not stopped')
    // bwrap exits with 128 + n when its command dies of signal n.
    expect(ended.code, ended.out).toBe(128 + 24)
    expect(limitVerdict({ ...ended, log: ended.out }, limits)).toMatch(/^the server used more than 2 s of CPU time/)
  })

  it('processes past the limit: stopped and named, or skipped as root (the kernel exempts uid 0)', { timeout: 120_000 }, async (ctx) => {
    const limits = { ...DEFAULT_LIMITS, procs: 24 }
    const ended = await runProbe(procsProbe(24), limits)
    skipIfSkipped(ctx, ended)
    expect(ended.out).toContain('probe: starting more than 24 processes')
    expect(ended.out).not.toContain('not stopped')
    expect(limitVerdict({ ...ended, log: ended.out }, limits)).toMatch(/^the server started more than 24 processes or threads/)
  })

  it.skipIf(process.getuid?.() !== 0 || !spawnSync('which', ['setpriv']).stdout.length)(
    'processes past the limit for a grader that is not root (here: root runs the sandbox as nobody): stopped, and named',
    { timeout: 120_000 },
    async (ctx) => {
      const limits = { ...DEFAULT_LIMITS, procs: 24 }
      const ended = await runProbe(procsProbe(24), limits, { asUser: 65534 })
      if (/Operation not permitted|No permission|setting up uid map/i.test(ended.out)) {
        console.warn(`test/limits.test.ts: bwrap cannot run as nobody here: ${ended.out.trim().split('\n')[0]}`)
        ctx.skip()
      }
      skipIfSkipped(ctx, ended)
      expect(ended.out).toContain('probe: starting more than 24 processes')
      expect(ended.out).not.toContain('not stopped')
      expect(limitVerdict({ ...ended, log: ended.out }, limits)).toMatch(/^the server started more than 24 processes or threads/)
    },
  )
})
