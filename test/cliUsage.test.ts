// Every command reads its command line the same way: an option it does not
// know is the user's mistake, told in one line with the command's usage and
// exit code 2, never a stack trace. And a grade narrowed with --only prints a
// rerun line that narrows it the same way.
import { LAUNCHER } from '#harness/commands.ts'
import { execFile } from 'node:child_process'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { describeParseArgsError, isParseArgsError } from '#harness/cliArgs.ts'
import { repoRoot } from '#harness/paths.ts'
import { rerunCommand } from '#grader/engine/rerun.ts'
import { GRADE_USAGE, HINT_USAGE, RESET_USAGE, SERVE_USAGE, type Usage, usageText, WATCH_USAGE } from '#grader/cli/usage.ts'
import { inEnglish, runCliDirectly } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('cli-usage')
afterAll(() => scratch.dispose())

/** Each command's entry point, with the positional it needs to reach its options. */
const commands: Array<[string, string[]]> = [
  ['grade', ['grader/cli/grade.ts', '1']],
  ['watch', ['grader/cli/watch.ts', '1']],
  ['hint', ['grader/cli/hint.ts', '1']],
  ['reset', ['grader/cli/reset.ts', '1']],
  ['serve', ['grader/cli/serve.ts', '0']],
  ['replay', ['replay/cli.ts', '0']],
  ['scores', ['grader/scores/cli.ts']],
  ['scores:import', ['grader/roster/import.ts', 'results.json']],
  ['bench', ['bench/cli.ts']],
]

/** A run that outlives this is stopped (one that ignored the option would go on: watch, serve); the test's own limit is longer. */
const SPAWN_LIMIT_MS = 200_000

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [LAUNCHER, ...args],
      // LAB_HOME: hint must not touch the course's own .lab/ even if it got that far. None of these runs starts a server.
      { cwd: repoRoot, env: { ...process.env, FORCE_COLOR: '0', ...inEnglish(scratch.path) }, timeout: SPAWN_LIMIT_MS },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    )
  })
}

describe.concurrent('an unknown option', () => {
  it.concurrent.for(commands)(
    'npm run %s: names it, prints the usage, exits 2, no stack trace',
    { timeout: SPAWN_LIMIT_MS + 20_000 },
    async ([name, [entry, ...positionals]], { expect }) => {
      const r = await run([entry!, ...positionals, '--no-such-option'])
      const output = r.stdout + r.stderr
      expect(r.code, output).toBe(2)
      expect(r.stderr).toContain('unknown option --no-such-option')
      expect(r.stderr).toContain(`usage: npm run ${name} --`)
      expect(output).not.toMatch(/^ {4}at /m)
    },
  )
})

it('npm run serve with an unknown stage: names it, prints the usage, exits 2, no stack trace', { timeout: SPAWN_LIMIT_MS + 20_000 }, async () => {
  const r = await run(['grader/cli/serve.ts', 'no-such-stage'])
  expect(r.code, r.stdout + r.stderr).toBe(2)
  expect(r.stderr).toContain('unknown stage "no-such-stage"')
  expect(r.stderr).toContain('usage: npm run serve --')
  expect(r.stdout + r.stderr).not.toMatch(/^ {4}at /m)
})

it.concurrent.for([
  [['0,3'], '0,3: a list of stages is for --roster; grade one stage, or all'],
  [['0,x', '--roster', 'no-such-folder'], 'unknown stage "x"'],
])('npm run grade -- %j: %s, with the usage and exit 2', { timeout: SPAWN_LIMIT_MS + 20_000 }, async ([args, says], { expect }) => {
  const r = await run(['grader/cli/grade.ts', ...(args as string[])])
  expect(r.code, r.stdout + r.stderr).toBe(2)
  expect(r.stderr).toContain(says)
  expect(r.stderr).toContain('usage: npm run grade --')
})

/** The English usage's lines of prose (two words or more), without the options' names. */
const englishDescriptions = (usage: Usage) =>
  usageText(usage, 'en')
    .split('\n')
    .slice(1)
    .map((line) => line.replace(/^ *(?:<stage>|all|--[-a-z]+(?: [A-Z"|]+)?) {2,}/, '').trim())
    .filter((line) => /[a-z]{3,} [a-z]{3,}/.test(line))

/** The learner's commands, whose usage is in their language (grader/cli/usage.ts). */
const learnerUsages = [
  ['grade', GRADE_USAGE],
  ['watch', WATCH_USAGE],
  ['hint', HINT_USAGE],
  ['reset', RESET_USAGE],
  ['serve', SERVE_USAGE],
] as const

describe.concurrent("the learner's commands speak their usage in the learner's language", () => {
  it.concurrent.for(learnerUsages.flatMap(([name]) => (['zh-CN', 'ko'] as const).map((lang) => [name, lang] as const)))(
    'npm run %s -- --no-such-option --lang %s: the problem and the usage translated, no English description left',
    { timeout: SPAWN_LIMIT_MS + 20_000 },
    async ([name, lang], { expect }) => {
      const usage = learnerUsages.find(([command]) => command === name)![1]
      const [entry, ...positionals] = commands.find(([command]) => command === name)![1]
      const r = await run([entry!, ...positionals, '--no-such-option', '--lang', lang])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain(usageText(usage, lang))
      expect(r.stderr).not.toContain('unknown option')
      // Every line of the English usage's prose is said otherwise.
      const english = englishDescriptions(usage)
      expect(english.length).toBeGreaterThan(usage.rows.length / 2)
      for (const line of english) expect(r.stderr, line).not.toContain(line)
    },
  )

  it(
    '--help prints it on stdout and exits 0, in every command',
    async () => {
      for (const [name] of learnerUsages) {
        const [entry] = commands.find(([command]) => command === name)![1]
        const r = await run([entry!, '--help', '--lang', 'ko'])
        expect(r.code, r.stderr).toBe(0)
        expect(r.stdout).toContain(`사용법: npm run ${name} --`)
      }
    },
    SPAWN_LIMIT_MS,
  )

  it("lays out a description under its option's column, on the option's line when the name leaves a space", () => {
    const usage = {
      synopsis: 'npm run x',
      column: 10,
      rows: [{ option: '--a', does: 'one\ntwo' }, { option: '--longer-than', does: 'three' }, 'blank' as const, { paragraph: 'four', indent: 2 }],
    }
    expect(usageText(usage, 'en')).toBe('usage: npm run x\n\n  --a     one\n          two\n  --longer-than\n          three\n\n  four')
  })
})

describe('the line that names the problem', () => {
  const problem = (args: string[], config: ParseArgsConfig = {}) => {
    try {
      parseArgs({ ...config, args })
    } catch (error) {
      if (isParseArgsError(error)) return describeParseArgsError(error)
      throw error
    }
    return undefined
  }

  it('names an unknown option, a missing value, a value given to a flag, and a stray argument', () => {
    const options = { seed: { type: 'string' }, solution: { type: 'boolean' } } as const
    expect(problem(['--no-such-option'], { options, allowPositionals: true })).toBe('unknown option --no-such-option')
    expect(problem(['-z'], { options })).toBe('unknown option -z')
    expect(problem(['--seed'], { options })).toBe('--seed needs a value')
    expect(problem(['--solution=yes'], { options })).toBe('--solution takes no value')
    expect(problem(['extra'], { options })).toBe('unexpected argument extra: this command takes none')
    expect(problem(['--seed', '1'], { options })).toBeUndefined()
  })
})

describe('the rerun line', () => {
  it('keeps --only (and --no-regression), quoted for the shell', () => {
    expect(rerunCommand(0, 7)).toBe('npm run grade -- 0 --seed 7')
    expect(rerunCommand(5, 7, { kind: 'solution' }, undefined, { histories: 5 })).toBe('npm run grade -- 5 --seed 7 --solution --histories 5')
    expect(rerunCommand(2, 7, { kind: 'solution' }, undefined, { only: ['a', 'b'] })).toBe('npm run grade -- 2 --seed 7 --solution --only a --only b')
    expect(rerunCommand(2, 7, { kind: 'starter' }, undefined, { only: ["it's"], noRegression: true })).toBe(
      `npm run grade -- 2 --seed 7 --only "it's" --no-regression`,
    )
  })

  it('a grade with --only prints it in its rerun line', async () => {
    const r = await runCliDirectly(['0', '--solution', '--seed', '7', '--only', 'suspected-duplicates'], scratch.path)
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain('rerun: npm run grade -- 0 --seed 7 --solution --only suspected-duplicates')
  })
})
