// npm run grade -- <stage|all> [--solution | --dir PATH | --server CMD | --roster DIR] [--seed N] [--repeat N] [--json FILE [--format F]] [--verbose] [--lang L]
import { existsSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import chalk from 'chalk'
import { languageOfCommandLine, languageOrExit, parseArgsOrExit } from '#harness/cliArgs.ts'
import { say } from '#harness/i18n/phrase.ts'
import { course, findStage, UnknownStageError } from '#harness/course.ts'
import { gradeAll } from './gradeAll.ts'
import { exitUnlessInterrupted, installSignalCleanup, interrupted } from '#harness/processes.ts'
import { nextStep } from '../output/nextStep.ts'
import { LOOP_OPTIONS, LoopOptionError, loopGradeOptions } from './options.ts'
import { refusal, UsageError, unknownStage } from './usageErrors.ts'
import { type Lang, rememberLangFlag } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { GRADE_USAGE, usageText } from './usage.ts'
import {
  printCheck,
  printDatabaseStart,
  printHeader,
  printKept,
  printUnconfined,
  stageHeadings,
  printSummary,
  printVerboseExchange,
  verdictOf,
} from '../output/report.ts'
import { newSeed } from '#harness/rng.ts'
import { DEFAULT_TIME_LIMIT_S, gradeRoster, RosterError } from '../roster/roster.ts'
import { listedSubmission, RosterListError } from '../roster/rosterList.ts'
import { repoRoot } from '#harness/paths.ts'
import { sandboxPolicy, SandboxUnavailableError } from '#harness/sandbox.ts'
import { isolationOf, refuseUnconfined, UnconfinedError } from '#harness/isolation.ts'
import { parseServerCommand, ServerCommandError } from '#harness/serverCommand.ts'
import { isFailure } from '../engine/checkResult.ts'
import type { GradeResult } from '../grade.ts'
import type { Source } from '#harness/workspace.ts'
import { coverageLines } from '../output/coverageTable.ts'
import { parseResultFormat, resultDocument, ResultFormatError } from '../output/resultFormats.ts'
import { firstUnpassedHere, pickLine } from './firstUnpassed.ts'
import { recordGrade } from './progressRecord.ts'

/** The usage, in the command line's language (grader/cli/usage.ts). */
const usage = (lang: Lang = languageOfCommandLine()) => usageText(GRADE_USAGE, lang)

async function main(): Promise<number> {
  installSignalCleanup(() => t(languageOfCommandLine(), 'interrupted'))
  const { values, positionals } = parseArgsOrExit(usage, {
    allowPositionals: true,
    options: {
      solution: { type: 'boolean', default: false },
      dir: { type: 'string' },
      server: { type: 'string' },
      seed: { type: 'string' },
      repeat: { type: 'string', default: '1' },
      json: { type: 'string' },
      format: { type: 'string' },
      verbose: { type: 'boolean', default: false },
      'no-sandbox': { type: 'boolean', default: false },
      'real-clock': { type: 'boolean', default: false },
      histories: { type: 'string' },
      coverage: { type: 'boolean', default: false },
      'require-isolation': { type: 'boolean', default: false },
      // For the roster's grader children: the sandbox is required, and the result goes to a pipe.
      sandbox: { type: 'boolean', default: false },
      'json-fd': { type: 'string' },
      roster: { type: 'string' },
      store: { type: 'string' },
      'time-limit': { type: 'string', default: String(DEFAULT_TIME_LIMIT_S) },
      jobs: { type: 'string' },
      regrade: { type: 'boolean', default: false },
      'roster-list': { type: 'string' },
      'roster-index': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
      lang: { type: 'string' },
      ...LOOP_OPTIONS,
    },
  })
  // A roster without a stage grades every stage; the learner's own stages/ without one, the first not yet passed.
  let wanted = positionals[0] ?? (values.roster ? 'all' : undefined)
  const bare = wanted === undefined && !values.solution && values.dir === undefined && values.server === undefined && values['roster-list'] === undefined
  if (values.help || (wanted === undefined && !bare) || positionals.length > 1) {
    console.log(usage())
    return values.help ? 0 : 2
  }
  if (wanted === undefined) {
    const pick = firstUnpassedHere()
    console.log(chalk.bold(pickLine(pick, languageOrExit(values.lang))))
    if (!pick) return 0
    wanted = String(pick.stage.number)
  }
  // A roster may take a list of stages (3,4): a class between two stages, or a short run of the whole course.
  if (wanted.includes(',') && !values.roster) throw new UsageError(refusal('stageList', { wanted }))
  const listed = wanted.includes(',') ? wanted.split(',').map(findStage) : undefined
  const stage = wanted === 'all' || listed ? undefined : findStage(wanted)
  const lang = languageOrExit(values.lang)
  // One learner of a list, picked by a job's index (docs/instructors.md, "Scaling out"): a --dir grade, stamped for scores:import.
  const fromList =
    values['roster-list'] === undefined && values['roster-index'] === undefined ? undefined : listedSubmission(values['roster-list'], values['roster-index'])
  if (fromList) {
    if (!stage || values.roster || values.dir || values.solution || values.server || values.format || values.repeat !== '1')
      throw new UsageError(refusal('rosterList'))
    console.log(chalk.dim(`${values['roster-list']}: index ${fromList.index} of ${fromList.count} (line ${fromList.line}), learner ${fromList.learner}`))
    values.dir = fromList.checkout
  }
  if (values.solution && (values.dir || values.server)) throw new UsageError(refusal('solutionOrDir'))
  // With --server, --dir is only the folder it runs in (a roster's checkout with a lab-server.sh).
  const server = values.server === undefined ? undefined : parseServerCommand(values.server, resolve(values.dir ?? process.cwd()))
  if (values.dir && !server && !existsSync(resolve(values.dir, 'stages'))) throw new UsageError(refusal('noStagesFolder', { dir: values.dir }))
  const source: Source = values.solution ? { kind: 'solution' } : values.dir && !server ? { kind: 'dir', path: resolve(values.dir) } : { kind: 'starter' }
  const repeat = Number(values.repeat)
  if (!Number.isInteger(repeat) || repeat < 1) throw new UsageError(refusal('repeatWhole'))
  const firstSeed = values.seed !== undefined ? Number(values.seed) : newSeed()
  if (!Number.isSafeInteger(firstSeed)) throw new UsageError(refusal('seedWhole'))
  const loop = loopGradeOptions(stage, values, values.json)
  const format = values.format === undefined ? undefined : parseResultFormat(values.format)
  // A platform's document is one grade of one stage, written where --json says.
  if (format && (!stage || values.roster || repeat !== 1 || values.json === undefined)) throw new UsageError(refusal('formatNeedsJson', { format }))
  const histories = values.histories === undefined ? undefined : Number(values.histories)
  if (histories !== undefined && !(Number.isInteger(histories) && histories >= 1)) throw new UsageError(refusal('historiesWhole'))
  if (loop.keep && repeat !== 1) throw new UsageError(refusal('keepOneServer'))
  // Its PostgreSQL (embedded, or a database made on LAB_DATABASE_URL's server) ends with the grade.
  if (loop.keep && stage?.database === 'postgres') throw new UsageError(refusal('keepSqlite', { stage: stage.number }))
  if (values.roster) {
    if (values.solution || values.dir || server || repeat !== 1 || loop.partial || loop.keep) throw new UsageError(refusal('rosterExcludes'))
    const timeLimit = Number(values['time-limit'])
    const jobs = values.jobs === undefined ? undefined : Number(values.jobs)
    if (!(timeLimit > 0)) throw new UsageError(refusal('timeLimitSeconds'))
    if (jobs !== undefined && !(Number.isInteger(jobs) && jobs >= 1)) throw new UsageError(refusal('jobsWhole'))
    const sandbox = sandboxPolicy({ roster: true, noSandbox: values['no-sandbox'] })
    return gradeRoster({
      stages: listed ? course.stages.filter((s) => listed.includes(s)) : stage ? [stage] : course.stages,
      roster: resolve(values.roster),
      seed: firstSeed,
      json: values.json,
      store: values.store,
      timeLimitMs: timeLimit * 1000,
      jobs,
      sandbox,
      regrade: values.regrade,
      histories,
    })
  }
  if (!stage && (repeat !== 1 || loop.partial || loop.keep || server)) throw new UsageError(refusal('allExcludes'))
  // The command line is accepted: from here on its --lang is the learner's choice.
  rememberLangFlag(values.lang, lang)
  // --keep leaves the learner's own server up for curl, on a port: no sandbox (it has no network).
  const sandbox = sandboxPolicy({ roster: values.sandbox, noSandbox: values['no-sandbox'] || loop.keep })
  // A learner's own runs keep the sandbox's compile cache; another checkout's never
  // do (a roster child's, a --dir): the next grading would load what it wrote.
  const sandboxTmp = values.sandbox || source.kind === 'dir' ? undefined : resolve(repoRoot, '.lab', 'sandbox-tmp')
  // Decided here as the grade decides it (the probe runs once per process).
  // An autograder platform (--format) or the CI template grades other people's
  // code for a record: no quiet fallback to none there.
  const isolation = isolationOf(sandbox)
  if (format || values['require-isolation'] || fromList) refuseUnconfined(isolation)
  // What is graded, when it is not the course's own stages/ (the learner's own code) or solutions/ (ours).
  const someoneElses = server ? `--server ${server.line}` : source.kind === 'dir' ? source.path : undefined
  if (!stage) {
    if (someoneElses) printUnconfined(isolation, someoneElses, lang)
    return gradeAll({ source, seed: firstSeed, verbose: values.verbose, json: values.json, sandbox, sandboxTmp, lang })
  }
  const where = someoneElses ?? (source.kind === 'starter' ? `stages/${stage.folder}` : `solutions/${stage.folder}`)
  if (someoneElses) printUnconfined(isolation, someoneElses, lang)

  // Loaded here, not at the top: a check module that fails to load is the
  // grader failing (exit 2), not a failed grade.
  const { grade } = await import('../grade.ts')
  const results: GradeResult[] = []
  for (let run = 0; run < repeat; run++) {
    const seed = firstSeed + run
    const quiet = repeat > 1
    if (!quiet) printHeader(stage, seed, where, lang)
    const result = await grade({
      ...loop.grade,
      stage: stage.number,
      seed,
      source,
      sandbox,
      sandboxTmp,
      server,
      realClock: values['real-clock'],
      histories,
      onExchange: values.verbose ? printVerboseExchange : undefined,
      onCheckStart: quiet ? undefined : stageHeadings(stage.number, lang),
      onDatabaseStart: quiet ? undefined : (s) => printDatabaseStart(s, lang),
      onCheckEnd: quiet ? (r) => (r.passed ? undefined : printCheck(r, lang)) : (r) => printCheck(r, lang),
    })
    results.push(result)
    recordGrade(result, { source, partial: loop.partial, server: server !== undefined })
    if (quiet) {
      const mark = result.passed ? chalk.green('✓') : chalk.red('✗')
      const seconds = (result.durationMs / 1000).toFixed(1)
      console.log(`${mark} ${t(lang, 'repeat.run', { run: run + 1, runs: repeat, seed, score: result.score, maxScore: result.maxScore, seconds })}`)
    } else {
      printSummary(result, lang)
      if (result.kept) printKept(result.kept, lang)
      console.log(chalk.bold(nextStep(result, loop, source, lang)))
    }
  }

  if (repeat > 1) {
    const failed = results.filter((r) => !r.passed)
    console.log(`\n${t(lang, 'repeat.summary', { verdict: verdictOf(failed.length === 0, lang), passed: repeat - failed.length, runs: repeat })}`)
    for (const r of failed)
      console.log(
        `  ${t(lang, 'repeat.rerun', {
          rerun: r.rerun,
          ids: r.checks
            .filter(isFailure)
            .map((c) => c.id)
            .join(', '),
        })}`,
      )
    const skipped = results[0]!.checks.filter((c) => c.status === 'skipped')
    if (skipped.length) console.log(`  ${t(lang, 'repeat.skipped', { count: skipped.length, ids: skipped.map((c) => c.id).join(', ') })}`)
  }
  if (values.coverage) console.log(`\n${coverageLines(results, lang).join('\n')}`)
  const jsonTo = values['json-fd'] !== undefined ? Number(values['json-fd']) : values.json
  if (jsonTo !== undefined) {
    const payload = repeat === 1 ? resultDocument(results[0]!, format) : { runs: results, passed: results.every((r) => r.passed) }
    // As the CI template stamps its results: scores:import reads the learner and the time from the file.
    if (fromList) Object.assign(payload as object, { learner: fromList.learner, gradedAt: new Date().toISOString() })
    writeFileSync(jsonTo, `${JSON.stringify(payload, null, 2)}\n`)
  }
  return results.every((r) => r.passed) ? 0 : 1
}

// Interrupted, main() ends however the cut grade ends: the signal handler
// (processes.ts) has said `interrupted` and exits with 130 or 143 once every
// child is stopped, with nothing more printed.
main().then(
  (code) => exitUnlessInterrupted(code),
  (error) => {
    if (interrupted()) return
    // One line, no usage: the command was right, the machine is not.
    if (error instanceof UnconfinedError || error instanceof RosterListError) {
      console.error(chalk.red(error.message))
      process.exit(2)
    }
    if (
      error instanceof UsageError ||
      error instanceof UnknownStageError ||
      error instanceof RosterError ||
      error instanceof LoopOptionError ||
      error instanceof SandboxUnavailableError ||
      error instanceof ServerCommandError ||
      error instanceof ResultFormatError
    ) {
      // The learner's mistakes are said in their language; an instructor's setup problems (a roster, a sandbox) in English.
      const said = error instanceof UsageError ? error.said : error instanceof UnknownStageError ? unknownStage(error) : error.message
      console.error(chalk.red(say(languageOfCommandLine(), said)))
      console.error(usage())
    } else console.error(chalk.red(t(languageOfCommandLine(), 'graderFailed')), error)
    process.exit(2)
  },
)
