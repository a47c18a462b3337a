// The bench's results: the JSON document, and how it reads in a terminal.
import { cpus, loadavg } from 'node:os'
import chalk from 'chalk'
import type { DayReplay } from './dayReplay.ts'
import type { Grading } from './grading.ts'
import type { LayerResult, LoadOptions } from './layers.ts'
import type { Loop } from './loop.ts'
import { type Figures, round, roundRatios } from './stats.ts'

export const GOALS = { freshRatio: 0.85, replayRatio: 1.0 }

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
export function totalCpu(f: Figures): number | null {
  if (f.cpuUsPerRequest === null) return null
  return f.databaseCpuUsPerRequest === null ? f.cpuUsPerRequest : f.cpuUsPerRequest + f.databaseCpuUsPerRequest
}

/** Each result next to stage 0's fresh-key figures (throughput, CPU, round by round). */
export function versusStage0<L extends LayerResult>(layers: L[], cpuOf: (f: Figures) => number | null = totalCpu) {
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

export type Compared = ReturnType<typeof versusStage0<LayerResult>>[number]

export function buildReport(
  options: LoadOptions,
  startLoad: number[],
  layers: LayerResult[],
  grading: BenchReport['grading'],
  dayReplay: DayReplay,
): BenchReport {
  const enriched = versusStage0(layers)
  const last = layers.at(-1)
  // The "final solution" is the last stage measured, and only counts when it is not stage 0 itself.
  const final = last && last.stage !== 0 ? enriched.at(-1)! : undefined
  const freshRatio = final ? final.freshVsStage0 : null
  const replayRatio = final ? final.replayVsStage0Fresh : null
  return {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, loadAverageAtStart: startLoad.map((x) => round(x)) },
    options,
    freshRatio,
    replayRatio,
    freshCpuRatio: final ? final.freshCpuVsStage0 : null,
    replayCpuRatio: final ? final.replayCpuVsStage0Fresh : null,
    goals: {
      freshRatio: { min: GOALS.freshRatio, met: freshRatio === null ? null : freshRatio >= GOALS.freshRatio },
      replayRatio: { min: GOALS.replayRatio, met: replayRatio === null ? null : replayRatio >= GOALS.replayRatio },
    },
    layers: enriched,
    grading,
    dayReplay,
  }
}

export const currentLoad = () => loadavg()

export const spread = (xs: number[]) => (xs.length ? `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}` : '-')
export const fixed = (x: number | null, digits: number) => (x === null ? '-' : x.toFixed(digits))

export function table(head: string[], rows: string[][]) {
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
  const figures = (f: LayerResult['fresh'], vs: number | null, rounds: number[], cpuVs: number | null) => [
    f.throughput.toFixed(0),
    f.p50Ms.toFixed(2),
    f.p99Ms.toFixed(2),
    fixed(vs, 2),
    spread(rounds),
    fixed(f.cpuUsPerRequest, 0),
    fixed(cpuVs, 2),
  ]
  const head = ['stage', 'server', 'req/s', 'p50 ms', 'p99 ms', '× st.0 fresh', 'per round', 'cpu µs/req', '× by cpu']
  console.log(chalk.bold('\nfresh keys') + chalk.dim(' (every request is new and executes)'))
  table(
    [...head, ''],
    r.layers.map((l) => [String(l.stage), l.label, ...figures(l.fresh, l.freshVsStage0, l.freshRoundRatios, l.freshCpuVsStage0), '']),
  )
  console.log(chalk.bold('\nreplays') + chalk.dim(' (identical retries of completed requests)'))
  table(
    [...head, 'answered'],
    r.layers.map((l) => [String(l.stage), l.label, ...figures(l.replay, l.replayVsStage0Fresh, l.replayRoundRatios, l.replayCpuVsStage0Fresh), answered(l)]),
  )
  const goal = (name: 'freshRatio' | 'replayRatio') => {
    const value = r[name]
    const { min, met } = r.goals[name]
    const verdict = met === null ? chalk.dim('n/a') : met ? chalk.green('goal met') : chalk.red('GOAL MISSED')
    const cpu = r[name === 'freshRatio' ? 'freshCpuRatio' : 'replayCpuRatio']
    return `${name} ${value?.toFixed(3) ?? 'n/a'} (goal ≥ ${min}) ${verdict}${chalk.dim(`  by cpu: ${fixed(cpu, 3)}`)}`
  }
  console.log(`\n${goal('freshRatio')}\n${goal('replayRatio')}`)
}

/** What the replays got back, and whether they executed again. */
export function answered(l: LayerResult): string {
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
    ['stage', 'verdict', 'full grade', '--no-regression', 'watch: save → 1st check', 'save → verdict'],
    loop.stages.map((l) => [
      String(l.stage),
      l.passed ? 'passed' : 'FAILED',
      s(l.fullWallMs),
      s(l.noRegressionWallMs),
      s(l.saveToFirstCheckMs),
      s(l.saveToVerdictMs),
    ]),
  )
  for (const l of loop.stages) for (const f of l.failed) console.log(chalk.red(`  stage ${l.stage} ${f}`))
}
