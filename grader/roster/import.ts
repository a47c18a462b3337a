// npm run scores:import -- [--store FILE] FILE|DIR...
// Loads grade result files (`npm run grade -- N --json FILE`, e.g. downloaded
// from the CI template's artifacts) into the results store. The learner is the
// file's "learner" field, else the file name without .json; the time is its
// "gradedAt" field, else the file's modification time.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import chalk from 'chalk'
import { parseArgsOrExit } from '#harness/cliArgs.ts'
import { stageByNumber } from '#harness/course.ts'
import { parseGradeResult } from './resultSchema.ts'
import { DEFAULT_STORE, DuplicateRunError, ResultsStore } from './store.ts'

const USAGE = `usage: npm run scores:import -- [--store FILE] FILE|DIR...

  Imports grade result files (JSON written by \`npm run grade -- N --json FILE\`);
  a folder is searched for *.json files, recursively.
  --store FILE   the results store (default results/grades.sqlite)`

const { values, positionals } = parseArgsOrExit(USAGE, {
  allowPositionals: true,
  options: { store: { type: 'string', default: DEFAULT_STORE }, help: { type: 'boolean', short: 'h', default: false } },
})
if (values.help || positionals.length === 0) {
  console.log(USAGE)
  process.exit(values.help ? 0 : 2)
}

const files = positionals.flatMap((p) => jsonFiles(resolve(p)))
const store = new ResultsStore(resolve(values.store))
let imported = 0
let problems = 0
let already = 0
for (const file of files) {
  try {
    const result = parseGradeResult(readFileSync(file, 'utf8'), file)
    stageByNumber(result.stage) // a result for a stage this course does not have is refused
    const learner = result.learner ?? basename(file, '.json')
    const gradedAt = result.gradedAt ?? statSync(file).mtime.toISOString()
    store.record({ learner, gradedAt, outcome: 'graded', reason: '', origin: `import ${file}`, result })
    imported++
    console.log(`${chalk.green('+')} ${learner}: stage ${result.stage}, ${result.score}/${result.maxScore}, seed ${result.seed}`)
  } catch (error) {
    if (error instanceof DuplicateRunError) {
      console.log(`${chalk.dim('=')} ${error.message}`)
      already++
      continue
    }
    problems++
    console.error(`${chalk.red('✗')} ${(error as Error).message}`)
  }
}
store.close()
console.log(`\n${imported} imported, ${already} already there, ${problems} refused, into ${store.path}`)
process.exit(problems > 0 ? 1 : 0)

function jsonFiles(path: string): string[] {
  if (!statSync(path, { throwIfNoEntry: false })) {
    console.error(`${chalk.red('✗')} ${path}: no such file or folder`)
    process.exit(2)
  }
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((e) => (e.isDirectory() ? jsonFiles(join(path, e.name)) : e.name.endsWith('.json') ? [join(path, e.name)] : []))
}
