// Nothing the grader starts may outlive it: not when a learner presses Ctrl-C
// in the middle of a check, not when someone sends the grader SIGTERM.
//
// To interrupt at a known moment, the graded checkout's learner file loops
// forever when loaded: the suspected-duplicates check then waits up to 5 s on
// that child process, with the server alive. The test interrupts inside that
// window, never by guessing a delay.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { startGradeCli } from '../helpers/cli.ts'
import { leftBehind, NOTHING_LEFT } from '../helpers/leftovers.ts'
import { descendantsOf, isBankServer, isLearnerCodeChild, leftoverAfter, processesWithMarker, stillRunning, waitFor } from '../helpers/procs.ts'
import { scratchDir } from '../helpers/scratch.ts'

const stage0 = stageByNumber(0)
const scratch = scratchDir('interrupt')
const checkout = join(scratch.path, 'checkout')
mkdirSync(join(checkout, 'stages', stage0.folder), { recursive: true })
// The marker comment finds this file's copies in .lab/work overlays.
const MARKER = `// overlay-marker ${process.pid}-${Date.now()}`
writeFileSync(join(checkout, 'stages', stage0.folder, 'suspectedDuplicates.ts'), `${MARKER}\nwhile (true) {}\nexport const SUSPECTED_DUPLICATES_SQL = ""\n`)

afterAll(() => scratch.disposeExpectingNoneLeft())

/** Starts a grade and returns once its server and its learner-code child are both running. */
async function gradeStuckInLearnerCode(runTmp: string) {
  const run = startGradeCli(['0', '--dir', checkout, '--seed', '3'], runTmp)
  // Each runs as the leader of a process group; sandboxed (bwrap), the group
  // also holds the sandbox's init and the Node process inside.
  const leader = (p: { pid: number; pgrp: number }) => p.pgrp === p.pid
  let learnerChild: ReturnType<typeof descendantsOf>[number]
  try {
    // A server may take up to the 60 s start-up ceiling on a loaded machine; the first five checks come after it.
    await waitFor(() => (run.output().includes('[auth-and-ownership]') ? true : undefined), 'the first five checks', 150_000)
    learnerChild = await waitFor(
      () => descendantsOf(run.child.pid!).find((p) => isLearnerCodeChild(p.cmdline) && leader(p)),
      'the child running the learner file',
      60_000,
    )
  } catch (error) {
    // Never leave a grade running behind a failed wait (its overlay would be counted by the tests below):
    // an interrupt is what makes the grader stop its servers and remove its overlay.
    process.kill(-run.child.pid!, 'SIGINT')
    await run.done
    throw error
  }
  const servers = processesWithMarker(runTmp).filter((p) => isBankServer(p.cmdline) && leader(p))
  expect(servers, 'exactly one server is running').toHaveLength(1)
  return { run, server: servers[0]!, learnerChild, all: descendantsOf(run.child.pid!) }
}

describe('interrupting the grader', () => {
  it("Ctrl-C (SIGINT to the grader's process group) stops the grade and kills the server and the learner-code child", { timeout: 300_000 }, async () => {
    const runTmp = join(scratch.path, 'sigint')
    mkdirSync(runTmp)
    const { run, server, learnerChild, all } = await gradeStuckInLearnerCode(runTmp)
    // The server and the learner child run in process groups of their own, so
    // the terminal's SIGINT does not reach them: the grader must kill them.
    expect([server.pgrp, learnerChild.pgrp]).toEqual([server.pid, learnerChild.pid])
    expect(all.filter((p) => p.pgrp === run.child.pid).length, 'npm, tsx and the grader share the group').toBeGreaterThanOrEqual(2)
    process.kill(-run.child.pid!, 'SIGINT')
    const exit = await run.done
    // Had the grade gone on, the learner code would have timed out after 5 s
    // and the grade would have ended with a verdict: no verdict means it was
    // the interrupt that stopped it, however slow the machine.
    expect(exit.stdout, 'the grade stopped at once').not.toMatch(/PASSED|FAILED/)
    expect(exit.code === 0, exit.stdout + exit.stderr).toBe(false)
    expect(await leftoverAfter(() => [server, learnerChild, ...all].filter(stillRunning))).toEqual([])
  })

  it('SIGTERM to the grader process alone (kill PID) also kills its server and its learner-code child', { timeout: 300_000 }, async () => {
    const runTmp = join(scratch.path, 'sigterm')
    mkdirSync(runTmp)
    const { run, server, learnerChild, all } = await gradeStuckInLearnerCode(runTmp)
    // The grader is the server's parent (npm and tsx sit above it).
    const grader = all.find((p) => p.pid === server.ppid)!
    expect(grader.cmdline).toContain('grader/cli/grade.ts')
    process.kill(grader.pid, 'SIGTERM')
    const exit = await run.done
    expect(exit.stdout, 'the grade stopped at once').not.toMatch(/PASSED|FAILED/)
    expect(exit.code === 0, exit.stdout + exit.stderr).toBe(false)
    expect(await leftoverAfter(() => [server, learnerChild, ...all].filter(stillRunning))).toEqual([])
  })
})

/** What a run left behind (leftovers.ts: processes, temp folders, clusters, cgroups), and overlays of its checkout. */
async function leftByRun(runTmp: string) {
  const work = resolve(repoRoot, '.lab', 'work')
  const overlays = (existsSync(work) ? readdirSync(work) : []).filter((run) => {
    const file = join(work, run, stage0.folder, 'suspectedDuplicates.ts')
    return existsSync(file) && readFileSync(file, 'utf8').startsWith(MARKER)
  })
  return { ...(await leftBehind([runTmp])), overlays }
}

const NOTHING = { ...NOTHING_LEFT, overlays: [] }

/** Starts `command` in its own process group, waits for one of its bank servers, then sends the group SIGINT. */
async function interruptOnceServing(command: string[], label: string) {
  const runTmp = join(scratch.path, label)
  mkdirSync(runTmp)
  const run = startGradeCli([], runTmp, command)
  await waitFor(() => processesWithMarker(runTmp).find((p) => isBankServer(p.cmdline)), `a bank server of ${label}`, 60_000)
  process.kill(-run.child.pid!, 'SIGINT')
  const exit = await run.done
  expect(exit.code === 0, exit.stdout + exit.stderr).toBe(false)
  return runTmp
}

describe('Ctrl-C leaves no process, no temp folder and no overlay', () => {
  it.each([
    ['grade', ['npm', 'run', '--silent', 'grade', '--', '0', '--dir', checkout, '--seed', '3']],
    ['grade --roster', ['npm', 'run', '--silent', 'grade', '--', '0', '--roster', 'ROSTER', '--store', 'STORE', '--seed', '3']],
    ['replay', ['npm', 'run', '--silent', 'replay', '--', '0', '--dir', checkout]],
    ['npm test', ['npm', 'test', '--silent', '--', 'test/bank.contract.test.ts']],
  ])('%s', async (label, template) => {
    const roster = join(scratch.path, `roster-${label.replaceAll(/\W/g, '')}`)
    mkdirSync(roster)
    cpSync(checkout, join(roster, 'learner'), { recursive: true })
    const command = template.map((arg) => (arg === 'ROSTER' ? roster : arg === 'STORE' ? join(roster, 'grades.sqlite') : arg))
    const runTmp = await interruptOnceServing(command, label.replaceAll(/\W/g, ''))
    expect(await leftByRun(runTmp)).toEqual(NOTHING)
  })
})

describe('Ctrl-C of a stage 6 grade leaves no PostgreSQL behind', () => {
  it('the embedded server, its backends and its cluster folder are gone', { timeout: 300_000 }, async () => {
    const runTmp = join(scratch.path, 'grade6')
    mkdirSync(runTmp)
    const run = startGradeCli(['6', '--solution', '--seed', '3'], runTmp)
    // The grade starts PostgreSQL before its first bank: once a bank serves, both run.
    const postgres = await waitFor(
      () => {
        const ours = processesWithMarker(runTmp)
        const servers = ours.filter((p) => /(^|\/)postgres( |$)|^postgres:/.test(p.cmdline))
        return servers.length > 0 && ours.some((p) => isBankServer(p.cmdline)) ? servers : undefined
      },
      'a bank server on the embedded PostgreSQL',
      150_000,
    )
    // The cluster's folder, from the postmaster's -D DATA (DATA is a folder inside it).
    const clusters = [...new Set(postgres.flatMap((p) => [...p.cmdline.matchAll(/-D (\S+)\/data\b/g)].map((m) => m[1]!)))]
    expect(clusters, 'the cluster folder, read from the postmaster').toHaveLength(1)
    process.kill(-run.child.pid!, 'SIGINT')
    const exit = await run.done
    expect(exit.stdout, 'the grade stopped at once').not.toMatch(/PASSED|FAILED/)
    expect(await leftoverAfter(() => postgres.filter(stillRunning))).toEqual([])
    expect(await leftByRun(runTmp)).toEqual(NOTHING)
    expect(
      clusters.filter((dir) => existsSync(dir)),
      'cluster folders left',
    ).toEqual([])
  })
})
