// npm run replay -- <stage | all> [--solution | --dir PATH] [--json FILE] [--day FILE] [--chart FILE]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, relative, resolve } from 'node:path'
import chalk from 'chalk'
import cliProgress from 'cli-progress'
import { parseArgsOrExit } from '#harness/cliArgs.ts'
import { course, findStage, UnknownStageError } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { exitUnlessInterrupted, installSignalCleanup, interrupted } from '#harness/processes.ts'
import type { Source } from '#harness/workspace.ts'
import { DAY_FILE } from '../logs/generator.ts'
import { chartHtml } from './chart.ts'
import type { DamageReport } from './damage.ts'
import { progressLines } from './progressLines.ts'
import { printAllStages, printStageReport } from './report.ts'
import { replayStage } from './run.ts'

const USAGE = `usage: npm run replay -- <stage | all> [options]

  <stage>        0, stage0, or a slug such as unique-key; "all" replays every stage
  --solution     replay the reference solutions instead of your stages/
  --dir PATH     replay the learner files of another checkout of the course
  --json FILE    write the damage figures as JSON
  --day FILE     another day (default ${DAY_FILE}; make one with npm run logs:generate)
  --chart FILE   where "all" writes its chart (default .lab/replay-all.html)`

class UsageError extends Error {}

async function main(): Promise<number> {
  installSignalCleanup()
  const { values, positionals } = parseArgsOrExit(USAGE, {
    allowPositionals: true,
    options: {
      solution: { type: 'boolean', default: false },
      dir: { type: 'string' },
      json: { type: 'string' },
      day: { type: 'string', default: resolve(repoRoot, DAY_FILE) },
      chart: { type: 'string', default: resolve(repoRoot, '.lab/replay-all.html') },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help || positionals.length !== 1) {
    console.log(USAGE)
    return values.help ? 0 : 2
  }
  if (values.solution && values.dir) throw new UsageError('--solution and --dir exclude each other')
  const source: Source = values.solution ? { kind: 'solution' } : values.dir ? { kind: 'dir', path: resolve(values.dir) } : { kind: 'starter' }
  const dayPath = resolve(values.day)
  const inRepo = relative(repoRoot, dayPath)
  const day = { text: readFileSync(dayPath, 'utf8'), file: inRepo.startsWith('..') ? dayPath : inRepo }
  const stages = positionals[0] === 'all' ? course.stages : [findStage(positionals[0]!)]

  const reports: DamageReport[] = []
  for (const stage of stages) {
    const bar = new cliProgress.SingleBar(
      { format: `stage ${stage.number} {bar} {value}/{total} lines · {sent} requests · {rate} req/s · {duration}s`, hideCursor: true, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    )
    const t0 = performance.now()
    // The bar draws on stderr, and only on a terminal: elsewhere, plain lines.
    const onTerminal = !!process.stderr.isTTY
    const lines = progressLines(`stage ${stage.number}`)
    if (onTerminal) bar.start(1, 0, { sent: 0, rate: 0 })
    try {
      const report = await replayStage({
        stage: stage.number,
        source,
        day,
        onProgress: onTerminal
          ? (p) => {
              bar.setTotal(p.total)
              bar.update(p.done, { sent: p.sent, rate: Math.round(p.sent / ((performance.now() - t0) / 1000)) })
            }
          : lines,
      })
      reports.push(report)
    } finally {
      if (onTerminal) bar.stop()
    }
    if (stages.length === 1) printStageReport(reports[0]!)
  }

  if (stages.length > 1) {
    printAllStages(reports)
    mkdirSync(dirname(values.chart), { recursive: true })
    writeFileSync(values.chart, chartHtml(reports))
    console.log(`\nchart: ${chalk.bold(values.chart)} (open it in a browser)`)
  }
  if (values.json) {
    writeFileSync(values.json, `${JSON.stringify(stages.length === 1 ? reports[0] : { stages: reports }, null, 2)}\n`)
    console.log(`figures: ${values.json}`)
  }
  return 0
}

// Interrupted, a replay's requests fail on the servers the interrupt stops: the
// signal handler (processes.ts) has said `interrupted`, and exits with 130 or 143.
main().then(
  (code) => exitUnlessInterrupted(code),
  (error) => {
    if (interrupted()) return
    if (error instanceof UsageError || error instanceof UnknownStageError) {
      console.error(chalk.red(error.message))
      console.error(USAGE)
    } else console.error(chalk.red('the replay itself failed:'), error)
    process.exit(2)
  },
)
