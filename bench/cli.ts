// npm run bench [-- --json FILE] [--seconds N] [--rounds N] [--stages 0,5] [--connections N] [--parts load,pg,grade,day,loop] [--instances 1,3] [--seed N]
// Not part of `npm test`: it takes minutes and its figures depend on the machine.
import { writeFileSync } from 'node:fs'
import chalk from 'chalk'
import { parseArgsOrExit } from '#harness/cliArgs.ts'
import { course } from '#harness/course.ts'
import { installSignalCleanup } from '#harness/processes.ts'
import { measureDayReplay } from './dayReplay.ts'
import { measureGrading } from './grading.ts'
import { measureLayers } from './layers.ts'
import { measureLoop } from './loop.ts'
import { DEFAULT_CONNECTIONS } from './load.ts'
import { buildPgReport, buildReport, currentLoad, printLoop, printPg, printReport } from './report.ts'
import { benchedFolder } from './targets.ts'

const PARTS = ['load', 'pg', 'grade', 'day', 'loop'] as const
const PARTS_LIST = PARTS.join(',')

const USAGE = `usage: npm run bench -- [options]

  --json FILE        also write the results as JSON (freshRatio, replayRatio, per-stage figures)
  --seconds N        length of one measured segment (default 1; decimals allowed)
  --rounds N         interleaved rounds per server and workload (default 10)
  --stages LIST      stages to measure, comma-separated (default: every stage in course.json)
  --connections N    keep-alive connections of the load generator (default ${DEFAULT_CONNECTIONS})
  --parts LIST       any of ${PARTS_LIST} (default all)
                     load: the layers on SQLite; pg: the PostgreSQL stages against stage 0 on PostgreSQL
  --instances LIST   bank instances per database in the pg part (default 1,3)
  --seed N           seed of the grading runs (default 1)

Profile a server: BENCH_CPU_PROF=DIR [BENCH_CPU_PROF_STAGES=0,5] npm run bench -- --parts load`

class UsageError extends Error {}

function numberOption(value: string, name: string, integer: boolean): number {
  const n = Number(value)
  if (!(n > 0) || (integer && !Number.isInteger(n))) throw new UsageError(`--${name} takes a ${integer ? 'whole ' : ''}number > 0`)
  return n
}

async function main(): Promise<number> {
  installSignalCleanup()
  const { values } = parseArgsOrExit(USAGE, {
    options: {
      json: { type: 'string' },
      seconds: { type: 'string', default: '1' },
      rounds: { type: 'string', default: '10' },
      stages: { type: 'string' },
      connections: { type: 'string', default: String(DEFAULT_CONNECTIONS) },
      parts: { type: 'string', default: PARTS_LIST },
      instances: { type: 'string', default: '1,3' },
      seed: { type: 'string', default: '1' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    console.log(USAGE)
    return 0
  }
  const known = course.stages.map((s) => s.number)
  const stages = values.stages ? values.stages.split(',').map((s) => Number(s.trim())) : known
  for (const s of stages) if (!known.includes(s)) throw new UsageError(`unknown stage ${s}; course.json has ${known.join(', ')}`)
  stages.sort((a, b) => a - b)
  const parts = values.parts.split(',').map((p) => p.trim())
  for (const p of parts) if (!(PARTS as readonly string[]).includes(p)) throw new UsageError(`unknown part "${p}"; parts: ${PARTS.join(', ')}`)
  const options = {
    stages,
    rounds: numberOption(values.rounds, 'rounds', true),
    seconds: numberOption(values.seconds, 'seconds', false),
    connections: numberOption(values.connections, 'connections', true),
  }
  const instances = values.instances.split(',').map((n) => numberOption(n.trim(), 'instances', true))
  // Stages on PostgreSQL are the pg part's, measured against stage 0 on PostgreSQL; the load part is SQLite's.
  const onPostgres = (n: number) => course.stages.find((s) => s.number === n)?.database === 'postgres'
  const pgStages = stages.filter(onPostgres)
  const seed = Number(values.seed)
  if (!Number.isSafeInteger(seed)) throw new UsageError('--seed takes a whole number')
  const log = (line: string) => console.log(chalk.dim(line))

  const startLoad = currentLoad()
  const bank = (number: number, instances = 1) => ({ stage: number, label: benchedFolder(number), instances })
  const sqliteBanks = stages.filter((n) => !onPostgres(n)).map((n) => bank(n))
  const pgBenched = instances.flatMap((n) => [0, ...pgStages].map((stage) => bank(stage, n)))
  const layers = parts.includes('load') ? (await measureLayers('sqlite', options, sqliteBanks, log)).results : []
  const pg = !parts.includes('pg')
    ? { skipped: 'skipped (--parts)' }
    : pgStages.length === 0
      ? { skipped: 'skipped (no PostgreSQL stage in --stages)' }
      : buildPgReport(await measureLayers('postgres', options, pgBenched, log))
  const grading = parts.includes('grade') ? await measureGrading(known, seed, log) : { skipped: 'skipped (--parts)' }
  const finalStage = Math.max(...known)
  const day = parts.includes('day') ? await measureDayReplay(finalStage, log) : { skipped: 'skipped (--parts)' }

  const loop = parts.includes('loop') ? await measureLoop(stages, seed, log) : { skipped: 'skipped (--parts)' }

  const report = { ...buildReport(options, startLoad, layers, grading, day), pg, loop }
  printReport(report)
  printPg(pg)
  printLoop(loop)
  if (values.json) {
    writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`)
    console.log(chalk.dim(`\nwrote ${values.json}`))
  }
  // A replay that executed again past stage 0 is a broken guarantee, not a slow one.
  const pgBanks = 'byInstances' in pg ? pg.byInstances.flatMap((g) => g.banks) : []
  const broken = [...report.layers, ...pgBanks].filter((l) => l.stage > 0 && l.replay.executedPerReplay > 0)
  for (const l of broken) console.error(chalk.red(`${l.label}: identical retries executed again (${l.replay.executedPerReplay.toFixed(2)} per retry)`))
  return broken.length ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof UsageError) {
      console.error(chalk.red(error.message))
      console.error(USAGE)
      process.exit(2)
    }
    console.error(chalk.red('the bench failed:'), error)
    process.exit(1)
  },
)
