// The PostgreSQL bench's part of the report: per instance count, each bank
// next to stage 0 with as many instances; how throughput scales with
// instances; and PostgreSQL's own start-up, apart from all of it.
import chalk from 'chalk'
import type { PgBench, PgResult } from './pgLayers.ts'
import type { PgStartup } from './pgTargets.ts'
import { answered, fixed, GOALS, spread, table, versusStage0 } from './report.ts'
import { round } from './stats.ts'

type PgCompared = ReturnType<typeof versusStage0<PgResult>>[number]

export type PgReport = {
  startup: PgStartup
  byInstances: Array<{
    instances: number
    /** The last PostgreSQL stage's fresh-key throughput / stage 0's fresh-key throughput, both with this many instances. */
    freshRatio: number | null
    /** Its replay throughput / stage 0's fresh-key throughput (a replay must not cost more than executing). */
    replayRatio: number | null
    /** The same from CPU per request, the bank's and PostgreSQL's together (null where PostgreSQL's cannot be seen). */
    freshCpuRatio: number | null
    replayCpuRatio: number | null
    banks: PgCompared[]
  }>
  /** Throughput with N instances / with the fewest, per stage and workload (how far more instances help on this machine). */
  scaling: Array<{ stage: number; instances: number; fresh: number | null; replay: number | null }>
}

export function buildPgReport(bench: PgBench): PgReport {
  const counts = [...new Set(bench.results.map((r) => r.instances))]
  const byInstances = counts.map((instances) => {
    const banks = versusStage0(bench.results.filter((r) => r.instances === instances))
    const final = banks.at(-1)?.stage ? banks.at(-1) : undefined
    return {
      instances,
      freshRatio: final?.freshVsStage0 ?? null,
      replayRatio: final?.replayVsStage0Fresh ?? null,
      freshCpuRatio: final?.freshCpuVsStage0 ?? null,
      replayCpuRatio: final?.replayCpuVsStage0Fresh ?? null,
      banks,
    }
  })
  const fewest = Math.min(...counts)
  const per = (a: number, b: number | undefined) => (b ? round(a / b, 3) : null)
  const scaling = bench.results
    .filter((r) => r.instances !== fewest)
    .map((r) => {
      const one = bench.results.find((o) => o.stage === r.stage && o.instances === fewest)
      return {
        stage: r.stage,
        instances: r.instances,
        fresh: per(r.fresh.throughput, one?.fresh.throughput),
        replay: per(r.replay.throughput, one?.replay.throughput),
      }
    })
  return { startup: bench.startup, byInstances, scaling }
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
  console.log(`  afterwards, stopping the banks, dropping the databases and stopping the server: ${seconds(s.stopMs)}`)
  const head = ['stage', 'server', 'req/s', 'p50 ms', 'p99 ms', '× st.0 fresh', 'per round', 'bank µs/req', 'pg µs/req', '× by cpu']
  for (const group of r.byInstances) {
    const title = `${group.instances} instance${group.instances === 1 ? '' : 's'} on one database`
    const rows = (mode: 'fresh' | 'replay') =>
      group.banks.map((b) => {
        const f = b[mode]
        const vs = mode === 'fresh' ? b.freshVsStage0 : b.replayVsStage0Fresh
        const cpuVs = mode === 'fresh' ? b.freshCpuVsStage0 : b.replayCpuVsStage0Fresh
        return [
          String(b.stage),
          b.label,
          f.throughput.toFixed(0),
          f.p50Ms.toFixed(2),
          f.p99Ms.toFixed(2),
          fixed(vs, 2),
          spread(mode === 'fresh' ? b.freshRoundRatios : b.replayRoundRatios),
          fixed(f.cpuUsPerRequest, 0),
          fixed(f.databaseCpuUsPerRequest, 0),
          fixed(cpuVs, 2),
          mode === 'fresh' ? '' : answered(b),
        ]
      })
    console.log(chalk.bold(`\n${title}, fresh keys`))
    table([...head, ''], rows('fresh'))
    console.log(chalk.bold(`${title}, replays`))
    table([...head, 'answered'], rows('replay'))
    const ratio = (name: string, value: number | null, cpu: number | null, min: number) =>
      `${name} ${fixed(value, 3)} ${chalk.dim(`(SQLite's goal ≥ ${min})  by cpu: ${fixed(cpu, 3)}`)}`
    console.log(
      `${ratio('freshRatio', group.freshRatio, group.freshCpuRatio, GOALS.freshRatio)}\n${ratio('replayRatio', group.replayRatio, group.replayCpuRatio, GOALS.replayRatio)}`,
    )
  }
  for (const x of r.scaling)
    console.log(chalk.dim(`stage ${x.stage}: ${x.instances} instances / the fewest: fresh ×${fixed(x.fresh, 2)}, replay ×${fixed(x.replay, 2)}`))
}
