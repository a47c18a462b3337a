// The resource limits on learner code (harness/limits.ts): the instructor's
// override, the sentences a report gives, and probe scripts
// (test/fixtures/limitProbes.ts) run through sandboxed() directly, each going
// past one limit. A probe checks first that its limit is in force and skips
// otherwise; the test kills whatever is left in `finally`, and removes the
// pids cgroup sandboxed() made for it (as root), even when it failed.
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, type TestContext, vi } from 'vitest'
import { classifyFailure, type ServerView } from '#grader/engine/classifyFailure.ts'
import { startFailureMessage } from '#grader/engine/startFailure.ts'
import {
  DEFAULT_LIMITS,
  endFromText,
  findPidsHierarchy,
  findPrlimit,
  LimitsError,
  type Limits,
  leftPidsCgroups,
  limitVerdict as limitPhrase,
  parseLimits,
  pidsHierarchy,
  prlimitArgs,
  releasePidsCgroup,
} from '#harness/limits.ts'
import { countersNote, noteSaid, processTree, stuckAtLimit as stuckPhrase } from '#harness/limitCounters.ts'
import { say } from '#harness/i18n/phrase.ts'
import { findBwrap, sandboxed } from '#harness/sandbox.ts'
import { ServerProcess, ServerStartError } from '#harness/spawnServer.ts'
import { cpuProbe, fileSizeProbe, type LimitProbe, memoryProbe, PIDS_QUESTION, procsProbe, stuckProbe } from './fixtures/limitProbes.ts'
import { scratchDir } from './helpers/scratch.ts'

/** The sentence's English, as a stuck start's error holds it. */
const stuckAtLimit = (...args: Parameters<typeof stuckPhrase>) => {
  const said = stuckPhrase(...args)
  return said === undefined ? undefined : String(said)
}

/** The verdict's English, as the result document holds it. */
const limitVerdict = (...args: Parameters<typeof limitPhrase>) => {
  const verdict = limitPhrase(...args)
  return verdict === undefined ? undefined : String(verdict)
}

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
    [{ code: 1, log: 'Error: spawnSync /bin/sh EAGAIN' }, 'the server started more than 40 processes or threads'],
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

describe('the pids cgroup: where one is made', () => {
  const mountinfo = (...rows: string[]) =>
    ['22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw', '30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755', ...rows].join('\n')
  const V1 = '38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids'
  const V2 = '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw'
  const view = (files: Record<string, string>, canWrite = (_dir: string) => true) => ({ read: (file: string) => files[file] ?? '', canWrite })

  it("cgroup v1's pids hierarchy, under the grader's own cgroup in it", () => {
    const files = { '/proc/self/mountinfo': mountinfo(V1, V2), '/proc/self/cgroup': '8:pids:/\n4:memory:/x\n0::/\n' }
    expect(findPidsHierarchy(view(files))).toEqual({ version: 1, base: '/sys/fs/cgroup/pids' })
    const nested = { ...files, '/proc/self/cgroup': '8:pids:/ci/job-7\n0::/\n' }
    expect(findPidsHierarchy(view(nested))).toEqual({ version: 1, base: '/sys/fs/cgroup/pids/ci/job-7' })
    expect(findPidsHierarchy(view(nested, (dir) => !dir.endsWith('job-7')))).toEqual({ version: 1, base: '/sys/fs/cgroup/pids' })
  })

  it('cgroup v2 when pids is enabled for the children of its root; none where nothing is writable or there is no pids controller', () => {
    const v2Only = '25 30 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate'
    const files = { '/proc/self/mountinfo': mountinfo(v2Only), '/proc/self/cgroup': '0::/user.slice/session-2.scope\n' }
    expect(findPidsHierarchy(view({ ...files, '/sys/fs/cgroup/cgroup.subtree_control': 'cpu io memory pids\n' }))).toEqual({
      version: 2,
      base: '/sys/fs/cgroup',
    })
    expect(findPidsHierarchy(view({ ...files, '/sys/fs/cgroup/cgroup.subtree_control': 'cpu memory\n' }))).toBeUndefined()
    expect(findPidsHierarchy(view({ ...files, '/sys/fs/cgroup/cgroup.subtree_control': 'pids\n' }, () => false))).toBeUndefined()
    // This machine's kind: a v2 mount with hugetlb only, and v1's pids.
    const both = { '/proc/self/mountinfo': mountinfo(V1, V2), '/proc/self/cgroup': '8:pids:/\n0::/\n', '/sys/fs/cgroup/unified/cgroup.subtree_control': '' }
    expect(findPidsHierarchy(view(both))).toEqual({ version: 1, base: '/sys/fs/cgroup/pids' })
    expect(findPidsHierarchy(view(both, () => false))).toBeUndefined()
    expect(findPidsHierarchy(view({ '/proc/self/mountinfo': mountinfo(V2) }))).toBeUndefined()
  })
})

describe('a live server at a limit: its counters', () => {
  const limits: Limits = { ...DEFAULT_LIMITS, memoryMb: 256, procs: 24 }

  it('names the process limit from refusals the pids cgroup counted, or (no cgroup) from its tasks at the limit', () => {
    expect(stuckAtLimit({ tasks: 24, refusedTasks: 3, largestDataMb: 40 }, limits)).toBe(
      'it was refused a new process or thread 3 times, with 24 running of at most 24, the limit for learner code (LAB_LIMITS=procs=… changes it)',
    )
    expect(stuckAtLimit({ tasks: 23, largestDataMb: 40 }, limits)).toMatch(/^it runs 23 processes and threads, at its limit of 24, .*LAB_LIMITS=procs=/)
  })

  it('names the memory limit when a process holds nearly all of it', () => {
    expect(stuckAtLimit({ tasks: 5, refusedTasks: 0, largestDataMb: 250 }, limits)).toMatch(
      /^it holds 250 MB of memory, nearly all of 256 MB, .*LAB_LIMITS=memory=/,
    )
  })

  it('names nothing below every limit (a slow server), and the note says how far below', () => {
    const slow = { tasks: 12, refusedTasks: 0, largestDataMb: 120 }
    expect(stuckAtLimit(slow, limits)).toBeUndefined()
    expect(stuckAtLimit({ tasks: 20, largestDataMb: 200 }, limits)).toBeUndefined()
    expect(String(countersNote(slow, limits))).toBe('12 processes and threads of 24, 120 MB of memory of 256 MB')
    expect(String(countersNote(slow, { ...limits, memoryMb: Number.POSITIVE_INFINITY }))).toBe('12 processes and threads of 24, 120 MB of memory')
  })

  it("reads the note back from a start failure's English, to say it in the learner's language", () => {
    const slow = { tasks: 12, refusedTasks: 0, largestDataMb: 120 }
    for (const memoryMb of [256, Number.POSITIVE_INFINITY]) {
      const note = countersNote(slow, { ...limits, memoryMb })
      const read = noteSaid(String(note))
      expect(typeof read).not.toBe('string')
      for (const lang of ['en', 'zh-CN', 'ko'] as const) expect(say(lang, read)).toBe(note.in(lang))
    }
    expect(noteSaid('not a note')).toBe('not a note')
  })

  it('reads a process tree from /proc: this process and the children it starts', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30_000)'], { stdio: 'ignore' })
    try {
      await new Promise((done) => child.once('spawn', done))
      expect(processTree(process.pid)).toEqual(expect.arrayContaining([process.pid, child.pid]))
      expect(processTree(child.pid!)).toEqual([child.pid])
    } finally {
      child.kill('SIGKILL')
    }
  })
})

const prlimit = findPrlimit()
const reports = describe.skipIf(!prlimit)

reports('the reports (with prlimit, under the default limits)', () => {
  it('a server that died of a limit while starting: the first check names it', () => {
    const reason = 'the server exited with code 1 before it listened.\nRangeError: Array buffer allocation failed\n    at /x/stages/05/a.ts:3:9'
    expect(String(startFailureMessage(reason))).toMatch(
      new RegExp(
        `^the server did not start: it used more than ${DEFAULT_LIMITS.memoryMb} MB of memory, the limit for learner code \\(LAB_LIMITS=memory=… changes it\\)\\n`,
      ),
    )
    expect(String(startFailureMessage('the server exited with code 1 before it listened.\nTypeError: nope'))).not.toMatch(/limit/)
  })

  it('a server that died of a limit during a check: the message names it', () => {
    const dead: ServerView = { unexpectedExit: 'exited with code 152', logTail: () => 'listening on unix:/x.sock' }
    const healthy: ServerView = { unexpectedExit: undefined, logTail: () => 'listening on unix:/y.sock' }
    const got = classifyFailure(new Error('socket hang up'), [healthy, dead], { recorded: [], unanswered: [] })
    expect(String(got.message)).toBe(
      `socket hang up (the server exited with code 152 during this check: it used more than ${DEFAULT_LIMITS.cpuSeconds} s of CPU time, the limit for learner code (LAB_LIMITS=cpu=… changes it))`,
    )
  })
})

const bwrap = findBwrap()
if (!bwrap.path || !prlimit) console.warn(`test/limits.test.ts: the probes are skipped: ${bwrap.problem ?? 'prlimit (util-linux) is not installed'}`)

type Ended = {
  code: number | null
  signal: NodeJS.Signals | null
  out: string
  /** Its pids cgroup (as root): pids.max, and the most processes in it at once (pids.peak, where the kernel has it). */
  cgroup?: { max: string; peak?: number }
}

/**
 * Runs `probe` through sandboxed() under `limits`, and returns how it ended.
 * `asUser`: as root, run the sandbox as that unprivileged uid (setpriv), the
 * way a grader that is not root runs it (then without a pids cgroup, which
 * such a grader has not got). Answers the process probe's question (is it in
 * a pids cgroup?) from outside, and removes the cgroup in `finally`.
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
      pidsCgroup: o.asUser === undefined,
    },
  )
  const [file, args] =
    o.asUser === undefined
      ? [command.file, command.args]
      : ['setpriv', [`--reuid=${o.asUser}`, `--regid=${o.asUser}`, '--clear-groups', '--', command.file, ...command.args]]
  let child: ReturnType<typeof spawn> | undefined
  let cgroup: Ended['cgroup']
  try {
    const started = spawn(file, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] })
    child = started
    let out = ''
    let asked = false
    const heard = (c: Buffer) => {
      out += c
      if (asked || !out.includes(PIDS_QUESTION)) return
      asked = true
      started.stdin.end(`${pidsAnswer(command.cgroup, started.pid)}\n`)
    }
    started.stdout.on('data', heard)
    started.stderr.on('data', heard)
    started.stdin.on('error', () => {}) // a probe that ended before the answer
    // Only a safety net, not an assertion: a probe that is not stopped ends on its own bound long before.
    const safety = setTimeout(() => kill(started.pid), 90_000)
    const ended = await new Promise<Ended>((done) => started.once('close', (code, signal) => done({ code, signal, out })))
    clearTimeout(safety)
    if (command.cgroup)
      cgroup = {
        max: read(command.cgroup, 'pids.max'),
        peak: existsSync(join(command.cgroup, 'pids.peak')) ? Number(read(command.cgroup, 'pids.peak')) : undefined,
      }
    return { ...ended, cgroup }
  } finally {
    kill(child?.pid)
    // Removed once the sandbox's last process is gone, whatever happened above (afterEach checks).
    await releasePidsCgroup(command.cgroup, 10_000)
    scratch.dispose()
  }
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8').trim()

/**
 * The answer to the process probe, looking from outside: "pids.max=N" when
 * the sandbox (the process spawned and everything under it) is in `cgroup`,
 * otherwise why not.
 */
function pidsAnswer(cgroup: string | undefined, pid: number | undefined): string {
  if (!cgroup || pid === undefined) return 'no writable pids controller on this machine'
  const members = new Set(read(cgroup, 'cgroup.procs').split('\n').map(Number))
  const tree = processTree(pid)
  const outside = tree.filter((p) => !members.has(p))
  if (tree.length < 2 || outside.length) return `the sandbox's processes ${outside.join(' ') || '(none found)'} are not in ${cgroup}`
  return `pids.max=${read(cgroup, 'pids.max')}`
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
  // Every probe's pids cgroup (as root) is gone once it ended, stopped or not.
  afterEach(() => {
    expect(leftPidsCgroups()).toEqual([])
  })

  it.skipIf(!pidsHierarchy())(
    'each sandboxed process gets a pids cgroup of its own, pids.max = procs, entered before bwrap (the SIGTERM trap first); none with LAB_LIMITS=off',
    async () => {
      const scratch = scratchDir('limits')
      const spec = { readOnly: [], writable: [scratch.path] }
      const made: (string | undefined)[] = []
      try {
        const server = sandboxed(spec, {}, ['/bin/true'], { graceful: true, limits: { ...DEFAULT_LIMITS, procs: 33 } })
        const exportChild = sandboxed(spec, {}, ['/bin/true'], { limits: { ...DEFAULT_LIMITS, procs: 33 } })
        made.push(server.cgroup, exportChild.cgroup)
        expect(server.cgroup).toMatch(new RegExp(`/idem-lab-${process.pid}-\\d+$`))
        expect(exportChild.cgroup).not.toBe(server.cgroup)
        expect(read(server.cgroup!, 'pids.max')).toBe('33')
        expect(server.args[1]).toMatch(new RegExp(`^trap "" TERM INT HUP; echo \\$\\$ > '${server.cgroup}/cgroup.procs' \\|\\| .*; exec "\\$0" "\\$@"$`))
        expect([exportChild.file, exportChild.args[2]]).toEqual(['/bin/sh', bwrap.path])
        vi.stubEnv('LAB_LIMITS', 'off')
        expect(sandboxed(spec, {}, ['/bin/true'], { graceful: true }).cgroup).toBeUndefined()
        vi.stubEnv('LAB_LIMITS', 'procs=40')
        const set = sandboxed(spec, {}, ['/bin/true'])
        made.push(set.cgroup)
        expect(read(set.cgroup!, 'pids.max')).toBe('40')
      } finally {
        vi.unstubAllEnvs()
        for (const cgroup of made) await releasePidsCgroup(cgroup)
        scratch.dispose()
      }
    },
  )

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

  it('processes past the limit: stopped and named (RLIMIT_NPROC; as root, which it does not bind, the pids cgroup)', { timeout: 120_000 }, async (ctx) => {
    const limits = { ...DEFAULT_LIMITS, procs: 24 }
    const ended = await runProbe(procsProbe(24), limits)
    skipIfSkipped(ctx, ended)
    expect(ended.out).toContain('probe: starting more than 24 processes')
    expect(ended.out).not.toContain('not stopped')
    expect(limitVerdict({ ...ended, log: ended.out }, limits)).toMatch(/^the server started more than 24 processes or threads/)
    if (process.getuid?.() === 0) {
      // As root, what held it was the cgroup: it said so from outside before the probe went on, and it never had more.
      expect(ended.out).toContain('probe: in a pids cgroup with pids.max=24')
      expect(ended.cgroup?.max).toBe('24')
      if (ended.cgroup?.peak !== undefined) expect(ended.cgroup.peak).toBeLessThanOrEqual(24)
    }
  })

  it('a server stuck at a limit while starting (it catches the error, then neither listens nor exits): the start error names the limit; a slow one is told apart', {
    timeout: 120_000,
  }, async () => {
    vi.stubEnv('LAB_LIMITS', 'procs=24,memory=256')
    const scratch = scratchDir('stuck')
    const servers: ServerProcess[] = []
    const startStuck = async (kind: 'procs' | 'memory' | 'slow', ceilingMs: number) => {
      const probe = stuckProbe(kind)
      const dir = join(scratch.path, kind)
      mkdirSync(dir)
      writeFileSync(join(dir, probe.file), probe.source)
      const server = new ServerProcess({
        stageDir: dir,
        dbPath: join(dir, 'bank.sqlite'),
        adminToken: 'stuck-probe-token',
        bundle: join(dir, probe.file),
        sandbox: { readOnly: [dir], writable: [dir] },
        startTimeoutMs: ceilingMs,
      })
      servers.push(server)
      return server.start().then(
        () => new Error('it started'),
        (error: Error) => error,
      )
    }
    try {
      // Side by side: each reaches its limit within a second or two, long before its ceiling.
      const [procs, memory, slow] = await Promise.all([startStuck('procs', 20_000), startStuck('memory', 20_000), startStuck('slow', 3_000)])
      for (const error of [procs, memory, slow]) expect(error).toBeInstanceOf(ServerStartError)
      expect(procs.message).toContain('probe: at the limit')
      const named = pidsHierarchy()
        ? /^the server is stuck at a limit: it was refused a new process or thread \d+ times?, with \d+ running of at most 24, /
        : /^the server is stuck at a limit: it runs \d+ processes and threads, at its limit of 24, /
      expect(procs.message).toMatch(named)
      expect(procs.message).toMatch(
        /LAB_LIMITS=procs=… changes it\)\.\nIt is still running, but did not print "listening on http:\/\/127\.0\.0\.1:PORT" within 20 s\./,
      )
      expect(memory.message).toContain('probe: at the limit')
      expect(memory.message).toMatch(/^the server is stuck at a limit: it holds 2\d\d MB of memory, nearly all of 256 MB, /)
      expect(slow.message).toMatch(
        /^the server is still running but did not print "listening on .*" within 3 s \(the start-up ceiling; LAB_START_TIMEOUT_S raises it\); it is below every limit \(\d+ processes and threads of 24, \d+ MB of memory of 256 MB\)\./,
      )
      // The first check's message leads with the limit, once.
      const first = String(startFailureMessage(procs.message))
      expect(first).toMatch(/^the server did not start: it (was refused|runs) .*LAB_LIMITS=procs=… changes it\)\nIt is still running/)
      expect(first.split('LAB_LIMITS=procs').length).toBe(2)
      expect(String(startFailureMessage(slow.message))).not.toMatch(/LAB_LIMITS/)
    } finally {
      vi.unstubAllEnvs()
      for (const server of servers) await server.stop()
      scratch.dispose()
    }
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
