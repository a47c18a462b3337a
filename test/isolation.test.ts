// Isolation "user" (harness/isolation.ts): a root grader without the
// bubblewrap sandbox runs the learner's server as nobody. A hostile layer
// tries to write into the course checkout and into the folder the results go
// to, at startup, through SQLite: native code, which Node's permission model
// (confinement.ts) does not see, so only the user it runs as can stop it.
// Its own data folder it may write. The grade still runs, and says "user".
// With neither the sandbox nor root, an adapter's grade (--format) refuses.
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { commandArgv } from '#harness/commands.ts'
import { ALLOW_UNCONFINED, isolationOf, refuseUnconfined, UnconfinedError } from '#harness/isolation.ts'
import { repoRoot } from '#harness/paths.ts'
import { findExecutable } from '#harness/executables.ts'
import { dropToNobody } from '#harness/unprivileged.ts'
import { checkoutWith } from './helpers/checkout.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('isolation')
afterAll(() => scratch.disposeExpectingNoneLeft('processes left running by the grade'))

/** A stage-1 layer that executes every request (the starter's bug: its one check fails, and the failure shows the server log). */
const hostileLayer = (targets: Record<string, string>) => `import { dirname, join } from 'node:path'
import type { CreateLayer } from '#bank/layer.ts'

const targets: Record<string, string> = { own: join(dirname(process.env.LAB_DB ?? '.'), 'mine.sqlite'), ...${JSON.stringify(targets)} }

export const createLayer: CreateLayer = ({ db }) => {
  console.error(\`hostile uid \${process.getuid?.()}\`)
  for (const [name, path] of Object.entries(targets)) {
    try {
      db.exec(\`ATTACH DATABASE '\${path}' AS h; CREATE TABLE h.t(x); DETACH DATABASE h\`)
      console.error(\`hostile write \${name}: written\`)
    } catch (error) {
      console.error(\`hostile write \${name}: \${(error as { code?: string }).code} \${(error as Error).message}\`)
    }
  }
  return { handle: (op) => op.execute() }
}
`

/** `grade ARGS --json-fd 3`: --json records full grades only, and one check is all this needs. */
function gradeWithResult(args: string[]): Promise<{ code: number | null; output: string; result: Record<string, unknown> }> {
  const [file, ...rest] = commandArgv('grader/cli/grade.ts', [...args, '--json-fd', '3'])
  const child = spawn(file!, rest, {
    cwd: repoRoot,
    env: { ...process.env, TMPDIR: scratch.path, FORCE_COLOR: '0', LAB_HOME: scratch.path, LC_ALL: 'C' },
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  })
  let output = ''
  let json = ''
  child.stdout!.on('data', (c: Buffer) => (output += c))
  child.stderr!.on('data', (c: Buffer) => (output += c))
  ;(child.stdio[3] as NodeJS.ReadableStream).on('data', (c: Buffer) => (json += c))
  return new Promise((done) => child.once('close', (code) => done({ code, output, result: json ? JSON.parse(json) : {} })))
}

const asRootWithSetpriv = process.getuid?.() === 0 && !!findExecutable('setpriv')

describe('the isolation a grade gets, and the refusal of none', () => {
  it('sandboxed is bwrap; unsandboxed is user for root with setpriv, none otherwise', () => {
    expect(isolationOf(true)).toBe('bwrap')
    expect(isolationOf(false)).toBe(asRootWithSetpriv && process.platform === 'linux' ? 'user' : 'none')
  })

  it('none is refused in one line, unless the one opt-in is set; bwrap and user never are', () => {
    expect(() => refuseUnconfined('none', {})).toThrow(UnconfinedError)
    expect(() => refuseUnconfined('none', {})).toThrow(/^refusing to grade: .*IDEM_LAB_ALLOW_UNCONFINED=1 to grade anyway$/)
    expect(() => refuseUnconfined('none', {})).not.toThrow(/\n/)
    expect(() => refuseUnconfined('none', { [ALLOW_UNCONFINED]: '1' })).not.toThrow()
    expect(() => refuseUnconfined('none', { [ALLOW_UNCONFINED]: 'yes' })).toThrow(UnconfinedError)
    for (const level of ['bwrap', 'user'] as const) expect(() => refuseUnconfined(level, {})).not.toThrow()
  })
})

describe.skipIf(!asRootWithSetpriv)('a root grader without the sandbox', () => {
  it('runs the learner server as nobody: it cannot write the course or the results folder, and the grade says isolation "user"', async () => {
    // A results folder as an autograder has one: root's, readable by others, not writable.
    const results = mkdtempSync(join('/tmp', 'idem-lab-results-'))
    chmodSync(results, 0o755)
    const targets = { course: join(repoRoot, `hostile-${process.pid}.sqlite`), results: join(results, 'hostile.sqlite') }
    try {
      const checkout = checkoutWith(scratch.path, 'hostile', 1, 'idempotency.ts', hostileLayer(targets))
      // --no-sandbox: what a machine where bwrap cannot start gets.
      const run = await gradeWithResult(['1', '--dir', checkout, '--no-sandbox', '--only', 'retries-execute-once', '--seed', '1'])
      const log = run.output
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.startsWith('hostile '))
      console.log(log.join('\n'))
      // The grade ran: its one check failed on the layer's bug, not on the layer's tricks.
      expect(run.code, run.output).toBe(1)
      expect(run.result).toMatchObject({ isolation: 'user', gradable: true, server: { started: true } })
      expect(log).toContain('hostile uid 65534')
      expect(log).toContain('hostile write own: written')
      expect(log).toContain(`hostile write course: SQLITE_CANTOPEN unable to open database: ${targets.course}`)
      expect(log).toContain(`hostile write results: SQLITE_CANTOPEN unable to open database: ${targets.results}`)
      expect(existsSync(targets.course) || existsSync(targets.results)).toBe(false)
      // Someone else's folder, but isolated: no warning.
      expect(run.output).not.toContain('NOT ISOLATED')
    } finally {
      rmSync(targets.course, { force: true })
      rmSync(results, { recursive: true, force: true })
    }
  })
})

describe.skipIf(!asRootWithSetpriv)('a grader that is not root, without the sandbox (here: root starts it as nobody)', () => {
  // After the root grade above: that run compiled the command's bundle
  // (harness/launch.mjs), which nobody could not write to .lab/.
  it('refuses an adapter grade (--format) in one line, exit 2, before anything runs', async () => {
    // nobody's own folder, for what the launcher and the CLI keep.
    const home = mkdtempSync(join('/tmp', 'idem-lab-nobody-'))
    chmodSync(home, 0o777)
    try {
      const checkout = checkoutWith(scratch.path, 'refused', 1, 'idempotency.ts', hostileLayer({}))
      chmodSync(scratch.path, 0o755) // nobody reads the checkout it is given
      const env = ['env', `HOME=${home}`, `TMPDIR=${home}`, `LAB_HOME=${home}`, 'FORCE_COLOR=0', `PATH=${process.env.PATH}`]
      const argv = commandArgv('grader/cli/grade.ts', ['1', '--dir', checkout, '--no-sandbox', '--format', 'gradescope', '--json', join(home, 'r.json')])
      const child = spawn('setpriv', [...dropToNobody(), ...env, ...argv], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      let err = ''
      child.stdout.on('data', (c: Buffer) => (out += c))
      child.stderr.on('data', (c: Buffer) => (err += c))
      const code = await new Promise((done) => child.once('close', done))
      expect([code, out, err.trim().split('\n').length], err).toEqual([2, '', 1])
      expect(err).toMatch(/^refusing to grade: the learner's code would run unconfined .* set IDEM_LAB_ALLOW_UNCONFINED=1 to grade anyway\n$/)
      expect(existsSync(join(home, 'r.json'))).toBe(false)
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  })
})
