// npm run test:repeat [-- --seeds 20] [--first-seed 1] [--jobs 3] [--mutants-only | --solutions-only] [id...]
//
// The long repetitions that prove the grader is not flaky: every reference
// solution passes its cumulative grade on every seed, and every mutant fails
// the check aimed at it on every seed. The seeds are 1 to N, plus the seeds
// each stage pins, less the one npm test grades it on (scripts/pinnedSeeds.ts).
// Three grades run at a time across all rows. A failure prints the failing
// check's first line and the rerun command.
import { parseArgs } from 'node:util'
import chalk from 'chalk'
import pLimit from 'p-limit'
import { course, stageByNumber } from '#harness/course.ts'
import { startPostgres, type PgServer } from '#harness/postgres.ts'
import { isFailure } from '#grader/engine/checkResult.ts'
import { mutants } from '#grader/mutants/index.ts'
import { materialize } from '#grader/mutants/mutant.ts'
import { installSignalCleanup } from '#harness/processes.ts'
import { sweepSeeds } from './pinnedSeeds.ts'
import { grade } from '#grader/grade.ts'

installSignalCleanup()
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seeds: { type: 'string', default: '20' },
    'first-seed': { type: 'string', default: '1' },
    'mutants-only': { type: 'boolean', default: false },
    'solutions-only': { type: 'boolean', default: false },
    jobs: { type: 'string', default: '3' },
  },
})
const seedsOf = (stage: number) => sweepSeeds(stage, Number(values.seeds), Number(values['first-seed']))
const limit = pLimit(Number(values.jobs))
type Row = { what: string; ok: number; failures: string[] }
const rows: Row[] = []

async function repeat(what: string, seeds: number[], once: (seed: number) => Promise<string | undefined>) {
  const row: Row = { what, ok: 0, failures: [] }
  rows.push(row)
  await Promise.all(
    seeds.map((seed) =>
      limit(async () => {
        const problem = await once(seed)
        if (problem) row.failures.push(problem)
        else row.ok++
      }),
    ),
  )
  const mark = row.failures.length ? chalk.red('✗') : chalk.green('✓')
  console.log(`${mark} ${what}: ${row.ok}/${seeds.length}`)
  for (const f of row.failures) console.log(chalk.red(`    ${f}`))
}

const wanted = (id: string) => positionals.length === 0 || positionals.includes(id)
// One PostgreSQL for every stage-6 grade (each makes and drops its own databases), started on first use.
let postgres: Promise<PgServer> | undefined
const sharedPostgres = async (stage: number) => (stageByNumber(stage).database === 'postgres' ? { postgres: await (postgres ??= startPostgres()) } : {})
// Every row is queued at once, so the limiter stays full from the first grade to the last.
const pending: Array<Promise<void>> = []

if (!values['mutants-only'])
  for (const stage of course.stages.filter((s) => wanted(`solution-${s.number}`)))
    pending.push(
      repeat(`solution of stage ${stage.number} passes`, seedsOf(stage.number), async (seed) => {
        const r = await grade({ stage: stage.number, seed, source: { kind: 'solution' }, shrink: false, ...(await sharedPostgres(stage.number)) })
        const failed = r.checks.filter((c) => !c.passed)
        return r.passed ? undefined : `${r.rerun}: failed ${failed.map((c) => `${c.id} (${String(c.message).split('\n')[0]})`).join(', ')}`
      }),
    )

if (!values['solutions-only'])
  for (const mutant of mutants.filter((m) => wanted(m.id))) {
    const path = materialize(mutant)
    pending.push(
      repeat(`mutant ${mutant.id} fails ${mutant.mustFail}`, seedsOf(mutant.stage), async (seed) => {
        const r = await grade({
          stage: mutant.stage,
          seed,
          source: { kind: 'dir', path },
          only: [mutant.mustFail],
          // Verdicts only: a failing history is not shrunk (GradeOptions.shrink).
          shrink: false,
          ...(await sharedPostgres(mutant.stage)),
        })
        const check = r.checks.find((c) => c.id === mutant.mustFail)
        return check && isFailure(check)
          ? undefined
          : `seed ${seed}: ${mutant.mustFail} did not fail on the mutant (${check?.status ?? 'not run'}; rerun: ${r.rerun})`
      }),
    )
  }
await Promise.all(pending)
await (await postgres)?.stop()

const failed = rows.filter((r) => r.failures.length > 0).length
console.log(`\n${rows.length - failed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)
