// What the sandbox costs a roster: 4 honest checkouts (the reference solution)
// graded with and without bubblewrap, side by side in one run, interleaved
// (sandboxed, unsandboxed, unsandboxed, sandboxed, ...) so that drift in the
// machine's load hits both alike. Reports each wall time, the means and
// their ratio.
//   node --import tsx bench/sandbox.ts [--stage N] [--rounds N] [--jobs N]
import { spawn } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { course, stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { installSignalCleanup, onCleanup } from '#harness/processes.ts'
import { findBwrap } from '#harness/sandbox.ts'

const { values } = parseArgs({
  options: { stage: { type: 'string', default: '5' }, rounds: { type: 'string', default: '2' }, jobs: { type: 'string', default: '2' } },
})
const stage = stageByNumber(Number(values.stage))
const rounds = Number(values.rounds)
if (!findBwrap().path) throw new Error(`no sandbox to measure: ${findBwrap().problem}`)
installSignalCleanup()

const dir = mkdtempSync(join(tmpdir(), 'idem-bench-sandbox-'))
onCleanup(() => rmSync(dir, { recursive: true, force: true }))
const roster = join(dir, 'class')
for (const learner of ['a', 'b', 'c', 'd']) {
  cpSync(resolve(repoRoot, 'stages'), join(roster, learner, 'stages'), { recursive: true })
  for (const s of course.stages.filter((s) => s.number <= stage.number))
    cpSync(resolve(repoRoot, 'solutions', s.folder), join(roster, learner, 'stages', s.folder), { recursive: true })
}

type RosterJson = { submissions: Array<{ learner: string; result: { checks: Array<{ id: string; passed: boolean; message: string }> } }> }

/** One roster run; returns its wall time in ms. */
function gradeRoster(sandboxed: boolean, run: number): Promise<number> {
  const store = join(dir, `store-${run}.sqlite`)
  const json = join(dir, `roster-${run}.json`)
  const args = [
    '--import',
    'tsx',
    'grader/cli/grade.ts',
    String(stage.number),
    '--roster',
    roster,
    '--store',
    store,
    '--json',
    json,
    '--seed',
    '1',
    '--jobs',
    values.jobs!,
  ]
  const t0 = performance.now()
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, sandboxed ? args : [...args, '--no-sandbox'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (c: Buffer) => (out += c))
    child.once('close', (code) => {
      if (code !== 0 || !out.includes(sandboxed ? '· sandboxed' : 'NOT sandboxed')) return fail(new Error(`roster run failed (${code}):\n${out}`))
      // An honest checkout that fails a check is a finding, not a reason to stop: say which and why.
      for (const s of (JSON.parse(readFileSync(json, 'utf8')) as RosterJson).submissions)
        for (const c of s.result.checks.filter((c) => !c.passed)) console.log(`  ! ${s.learner} failed ${c.id}: ${c.message.split('\n')[0]}`)
      done(performance.now() - t0)
    })
  })
}

const times = { sandboxed: [] as number[], unsandboxed: [] as number[] }
let run = 0
for (let r = 0; r < rounds; r++) {
  // ABBA order: neither side always goes first.
  for (const sandboxed of r % 2 === 0 ? [true, false] : [false, true]) {
    const ms = await gradeRoster(sandboxed, run++)
    times[sandboxed ? 'sandboxed' : 'unsandboxed'].push(ms)
    console.log(`round ${r + 1}: ${sandboxed ? 'sandboxed  ' : 'unsandboxed'} ${(ms / 1000).toFixed(1)} s`)
  }
}
const mean = (xs: number[]) => xs.reduce((sum, x) => sum + x, 0) / xs.length
const [s, u] = [mean(times.sandboxed), mean(times.unsandboxed)]
console.log(`\nstage ${stage.number}, 4 honest checkouts, ${values.jobs} at a time, ${rounds} round(s)`)
console.log(`mean: sandboxed ${(s / 1000).toFixed(1)} s, unsandboxed ${(u / 1000).toFixed(1)} s, ratio ${(s / u).toFixed(2)}× (goal ≤ 1.3×)`)
process.exit(0)
