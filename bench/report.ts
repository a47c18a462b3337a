// The bench's results: the JSON document, and how it reads in a terminal.
// The layers on SQLite and on PostgreSQL are compared alike: each bank next to
// stage 0 on the same store with as many instances.
import { cpus, loadavg } from 'node:os'
import chalk from 'chalk'
import type { DayReplay } from './dayReplay.ts'
import type { Grading } from './grading.ts'
import type { LayerResult, LayersBench, LoadOptions } from './layers.ts'
import type { Loop } from './loop.ts'
import { type Figures, round, roundRatios } from './stats.ts'
import type { Startup } from './targets.ts'

const GOALS = { freshRatio: 0.85, replayRatio: 1.0 }

export type BenchReport = {
  date: string
  machine: { cpus: number; node: string; loadAverageAtStart: number[] }
  options: LoadOptions
  /** Final solution's fresh-key throughput / stage 0 starter's fresh-key throughput (null without both). */
  freshRatio: number | null
  /** Final solution's replay throughput / stage 0 starter's fresh-key throughput. */
  replayRatio: number | null
  /**
   * The same two ratios from server CPU per request (stage 0 fresh CPU / final
   * solution's CPU): the capacity ratio, much less sensitive than throughput
   * to other load on the machine. A cross-check of the throughput ratios, not a replacement.
   */
  freshCpuRatio: number | null
  replayCpuRatio: number | null
  goals: { freshRatio: { min: number; met: boolean | null }; replayRatio: { min: number; met: boolean | null } }
  /** Per-round ratios (freshRoundRatios, replayRoundRatios): their spread is the noise left after interleaving. */
  layers: Compared[]
  grading: Grading | { skipped: string }
  dayReplay: DayReplay
}

/** Server CPU per request: the bank's thread (SQLite included), plus the database server's where it is a process of its own. */
function totalCpu(f: Figures): number | null {
  if (f.cpuUsPerRequest === null) return null
  return f.databaseCpuUsPerRequest === null ? f.cpuUsPerRequest : f.cpuUsPerRequest + f.databaseCpuUsPerRequest
}

/** Each result next to stage 0's fresh-key figures (throughput, CPU, round by round). */
function versusStage0<L extends LayerResult>(layers: L[], cpuOf: (f: Figures) => number | null = totalCpu) {
  const base = layers.find((l) => l.stage === 0)
  const ratio = (x: number) => (base && base.fresh.throughput > 0 ? round(x / base.fresh.throughput, 3) : null)
  const baseCpu = base ? cpuOf(base.fresh) : null
  const cpuRatio = (x: number | null) => (baseCpu !== null && x ? round(baseCpu / x, 3) : null)
  return layers.map((l) => ({
    ...l,
    freshVsStage0: ratio(l.fresh.throughput),
    replayVsStage0Fresh: ratio(l.replay.throughput),
    freshCpuVsStage0: cpuRatio(cpuOf(l.fresh)),
    replayCpuVsStage0Fresh: cpuRatio(cpuOf(l.replay)),
    freshRoundRatios: base ? roundRatios(l.fresh, base.fresh).map((x) => round(x, 3)) : [],
    replayRoundRatios: base ? roundRatios(l.replay, base.fresh).map((x) => round(x, 3)) : [],
  }))
}

type Compared = ReturnType<typeof versusStage0<LayerResult>>[number]

/**
 * A group of banks (one store, one instance count) next to its stage 0: the
 * last stage's ratios, when the last is not stage 0 itself. freshRatio: its
 * fresh-key throughput / stage 0's; replayRatio: its replay throughput /
 * stage 0's fresh-key throughput (a replay must not cost more than
 * executing); the same two from CPU per request, the bank's and a database
 * server's together (null where that cannot be seen).
 */
function compared(results: LayerResult[]) {
  const banks = versusStage0(results)
  const final = banks.at(-1)?.stage ? banks.at(-1) : undefined
  return {
    freshRatio: final?.freshVsStage0 ?? null,
    replayRatio: final?.replayVsStage0Fresh ?? null,
    freshCpuRatio: final?.freshCpuVsStage0 ?? null,
    replayCpuRatio: final?.replayCpuVsStage0Fresh ?? null,
    banks,
  }
}

export function buildReport(
  options: LoadOptions,
  startLoad: number[],
  layers: LayerResult[],
  grading: BenchReport['grading'],
  dayReplay: DayReplay,
): BenchReport {
  const { banks, ...ratios } = compared(layers)
  const met = (value: number | null, min: number) => ({ min, met: value === null ? null : value >= min })
  return {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, loadAverageAtStart: startLoad.map((x) => round(x)) },
    options,
    ...ratios,
    goals: { freshRatio: met(ratios.freshRatio, GOALS.freshRatio), replayRatio: met(ratios.replayRatio, GOALS.replayRatio) },
    layers: banks,
    grading,
    dayReplay,
  }
}

export type PgReport = {
  startup: Startup
  /** Per instance count, each bank next to stage 0 with as many instances. */
  byInstances: Array<{ instances: number } & ReturnType<typeof compared>>
  /** Throughput with N instances / with the fewest, per stage and workload (how far more instances help on this machine). */
  scaling: Array<{ stage: number; instances: number; fresh: number | null; replay: number | null }>
}

export function buildPgReport({ results, startup }: LayersBench): PgReport {
  const counts = [...new Set(results.map((r) => r.instances))]
  const byInstances = counts.map((instances) => ({ instances, ...compared(results.filter((r) => r.instances === instances)) }))
  const fewest = Math.min(...counts)
  const per = (a: number, b: number | undefined) => (b ? round(a / b, 3) : null)
  const scaling = results
    .filter((r) => r.instances !== fewest)
    .map((r) => {
      const one = results.find((o) => o.stage === r.stage && o.instances === fewest)
      return {
        stage: r.stage,
        instances: r.instances,
        fresh: per(r.fresh.throughput, one?.fresh.throughput),
        replay: per(r.replay.throughput, one?.replay.throughput),
      }
    })
  return { startup: startup!, byInstances, scaling }
}

export const currentLoad = () => loadavg()

const spread = (xs: number[]) => (xs.length ? `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}` : '-')
const fixed = (x: number | null, digits: number) => (x === null ? '-' : x.toFixed(digits))

function table(head: string[], rows: string[][]) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: string[]) => cells.map((c, i) => (i <= 1 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')
  console.log(chalk.dim(line(head)))
  for (const row of rows) console.log(line(row))
}

export function printReport(r: BenchReport) {
  if (r.layers.length) printLayers(r)
  else console.log(chalk.dim('\nload: skipped (--parts)'))
  printGrading(r.grading)
  printDayReplay(r.dayReplay)
}

function printLayers(r: BenchReport) {
  const { options: o } = r
  console.log(
    chalk.bold('\nPOST /transfers on loopback') +
      chalk.dim(`  (${o.rounds} interleaved rounds × ${o.seconds} s per server and workload, ${o.connections} connections, ${r.machine.cpus} cores)`),
  )
  printBanks('', r.layers)
  const goal = (name: 'freshRatio' | 'replayRatio') => {
    const { min, met } = r.goals[name]
    const verdict = met === null ? chalk.dim('n/a') : met ? chalk.green('goal met') : chalk.red('GOAL MISSED')
    return ratioLine(name, r[name], r[name === 'freshRatio' ? 'freshCpuRatio' : 'replayCpuRatio'], `(goal ≥ ${min}) ${verdict}`)
  }
  console.log(`\n${goal('freshRatio')}\n${goal('replayRatio')}`)
}

const ratioLine = (name: string, value: number | null, cpu: number | null, goal: string) =>
  `${name} ${fixed(value, 3)} ${goal}${chalk.dim(`  by cpu: ${fixed(cpu, 3)}`)}`

/** The fresh-key and the replay table of one group of banks; db µs/req is a database server's own ('-' for SQLite, which runs in the bank's thread). */
function printBanks(title: string, banks: Compared[]) {
  const head = ['stage', 'server', 'req/s', 'p50 ms', 'p99 ms', '× st.0 fresh', 'per round', 'bank µs/req', 'db µs/req', '× by cpu']
  const rows = (mode: 'fresh' | 'replay') =>
    banks.map((b) => {
      const f = b[mode]
      const fresh = mode === 'fresh'
      return [
        String(b.stage),
        b.label,
        f.throughput.toFixed(0),
        f.p50Ms.toFixed(2),
        f.p99Ms.toFixed(2),
        fixed(fresh ? b.freshVsStage0 : b.replayVsStage0Fresh, 2),
        spread(fresh ? b.freshRoundRatios : b.replayRoundRatios),
        fixed(f.cpuUsPerRequest, 0),
        fixed(f.databaseCpuUsPerRequest, 0),
        fixed(fresh ? b.freshCpuVsStage0 : b.replayCpuVsStage0Fresh, 2),
        fresh ? '' : answered(b),
      ]
    })
  console.log(chalk.bold(`\n${title}fresh keys`) + chalk.dim(' (every request is new and executes)'))
  table([...head, ''], rows('fresh'))
  console.log(chalk.bold(`\n${title}replays`) + chalk.dim(' (identical retries of completed requests)'))
  table([...head, 'answered'], rows('replay'))
}

const seconds = (ms: number | null) => (ms === null ? '?' : `${(ms / 1000).toFixed(2)} s`)

export function printPg(r: PgReport | { skipped: string }) {
  if ('skipped' in r) return console.log(chalk.dim(`\nPostgreSQL: ${r.skipped}`))
  const s = r.startup
  const creates = [...s.createDatabaseMs].sort((a, b) => a - b)
  console.log(
    chalk.bold('\nPOST /transfers on PostgreSQL') +
      chalk.dim("  (every bank interleaved with the others in one run; the client spreads requests round-robin over a bank's instances)"),
  )
  const start = s.kind === 'embedded' ? `embedded server, initdb + start ${seconds(s.startMs)}` : 'external server (LAB_DATABASE_URL), no start'
  console.log(
    `  PostgreSQL's own cost, not in the figures below: ${start}; CREATE DATABASE ×${creates.length}, median ${fixed(creates[Math.floor(creates.length / 2)] ?? null, 0)} ms`,
  )
  console.log(`  afterwards, once the banks stopped, dropping the databases and stopping the server: ${seconds(s.stopMs)}`)
  for (const group of r.byInstances) {
    printBanks(`${group.instances} instance${group.instances === 1 ? '' : 's'} on one database, `, group.banks)
    const goal = (min: number) => chalk.dim(`(SQLite's goal ≥ ${min})`)
    console.log(
      `${ratioLine('freshRatio', group.freshRatio, group.freshCpuRatio, goal(GOALS.freshRatio))}\n${ratioLine('replayRatio', group.replayRatio, group.replayCpuRatio, goal(GOALS.replayRatio))}`,
    )
  }
  for (const x of r.scaling)
    console.log(chalk.dim(`stage ${x.stage}: ${x.instances} instances / the fewest: fresh ×${fixed(x.fresh, 2)}, replay ×${fixed(x.replay, 2)}`))
}

/** What the replays got back, and whether they executed again. */
function answered(l: LayerResult): string {
  const outcomes = Object.entries(l.replay.outcomes)
    .map(([k, v]) => `${k}×${v}`)
    .join(' ')
  const again = l.replay.executedPerReplay > 0 ? ` (executed again: ${l.replay.executedPerReplay.toFixed(2)} per retry)` : ''
  return outcomes + again
}

function printGrading(grading: BenchReport['grading']) {
  if ('skipped' in grading) console.log(chalk.dim(`\ngrading: ${grading.skipped}`))
  else {
    console.log(chalk.bold(`\nGrading the reference solutions`) + chalk.dim(`  (seed ${grading.seed}; stage N runs stages N..0)`))
    for (const g of grading.stages)
      console.log(
        `  stage ${g.stage}: ${g.passed ? chalk.green('passed') : chalk.red(`FAILED ${g.failed.join(', ')}`)} ${g.score}/${g.maxScore}, ` +
          `${g.checks} checks, wall ${(g.wallMs / 1000).toFixed(1)} s (grade() ${(g.gradeMs / 1000).toFixed(1)} s), max RSS ${g.maxRssMb.toFixed(0)} MB`,
      )
    console.log(`  peak grader memory (max RSS): ${grading.peakRssMb.toFixed(0)} MB`)
  }
}

function printDayReplay(d: DayReplay) {
  if ('skipped' in d) return console.log(chalk.dim(`\nday replay: ${d.skipped}`))
  const s = (ms: number | null) => (ms === null ? '?' : `${(ms / 1000).toFixed(1)} s`)
  console.log(chalk.bold('\nDay replay') + chalk.dim(`  ${d.command} (exit ${d.exitCode})`))
  console.log(
    `  ${d.attempts ?? '?'} attempts (${d.dayLines ?? '?'} lines) replayed in ${s(d.replayMs)}: ${fixed(d.attemptsPerSecond, 0)} attempts/s; ` +
      `wall ${s(d.wallMs)} with start-up and judging (${fixed(d.attemptsPerWallSecond, 0)} attempts/s)`,
  )
  console.log(`  duplicateTransfers ${d.duplicateTransfers ?? '?'}, lostTransfers ${d.lostTransfers ?? '?'}`)
}

export function printLoop(loop: Loop | { skipped: string }) {
  if ('skipped' in loop) return console.log(chalk.dim(`\nlearner loop: ${loop.skipped}`))
  console.log(chalk.bold("\nThe learner's loop") + chalk.dim(`  (reference solutions, seed ${loop.seed}; wall times include process start-up)`))
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  table(
    ['stage', 'verdict', 'full grade', '× stage 0', 'server starts', '--no-regression', 'its starts', 'watch: save → 1st check', 'save → verdict'],
    loop.stages.map((l) => [
      String(l.stage),
      l.passed ? 'passed' : 'FAILED',
      s(l.fullWallMs),
      loop.ratiosToStage0[l.stage] === undefined ? '' : `${loop.ratiosToStage0[l.stage]!.toFixed(1)}×`,
      String(l.fullStarts),
      s(l.noRegressionWallMs),
      String(l.noRegressionStarts),
      s(l.saveToFirstCheckMs),
      s(l.saveToVerdictMs),
    ]),
  )
  for (const l of loop.stages) for (const f of l.failed) console.log(chalk.red(`  stage ${l.stage} ${f}`))
}
