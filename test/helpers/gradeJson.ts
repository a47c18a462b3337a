// Grades as a learner or a CI job runs it, `npm run grade -- ... --json FILE`,
// and reads the file back: the real v1 result (or a --format document) a test
// judges, never one typed by hand.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runCliDirectly } from './cli.ts'

/** The exit code, what it printed, and the file --json wrote (`name`.json in `dir`). */
export async function gradeToJson<T>(dir: string, name: string, args: string[]) {
  const file = join(dir, `${name}.json`)
  const run = await runCliDirectly([...args, '--json', file], dir)
  return { ...run, result: JSON.parse(readFileSync(file, 'utf8')) as T }
}
