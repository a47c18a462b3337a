// The grade command's refusals of a command line it can read but cannot run
// (--keep with --repeat, a seed that is not a number): one line in the
// learner's language, then the usage. Its own module, without a main, so that
// the phrasebook (grader/phrasebook.ts) registers its templates for i18n:status.
import type { UnknownStageError } from '#harness/course.ts'
import { type Line, type Phrase, phrases } from '#harness/i18n/phrase.ts'

/** A command line the grade command refuses: `said` is told in the learner's language, its English is the message. */
export class UsageError extends Error {
  constructor(readonly said: Line) {
    super(String(said))
  }
}

export const refusal = phrases('usage', {
  stageList: '{wanted}: a list of stages is for --roster; grade one stage, or all',
  rosterList:
    '--roster-list grades one stage of one checkout: it needs a stage, and excludes all, --roster, --dir, --solution, --server, --format and --repeat',
  solutionOrDir: '--solution and --dir (or --server) exclude each other',
  noStagesFolder: '--dir {dir}: no stages/ folder there; point it at a checkout of the course',
  repeatWhole: '--repeat takes a whole number ≥ 1',
  seedWhole: '--seed takes a whole number',
  formatNeedsJson: '--format {format} writes one grade of one stage to --json FILE: it needs --json, and excludes all, --roster and --repeat',
  historiesWhole: '--histories takes a whole number ≥ 1',
  keepOneServer: '--keep keeps one server: it excludes --repeat',
  keepSqlite: "--keep keeps a SQLite file: stage {stage}'s database ends with the grade",
  rosterExcludes: '--roster excludes --solution, --dir, --server, --repeat, --only, --no-regression and --keep',
  timeLimitSeconds: '--time-limit takes a number of seconds',
  jobsWhole: '--jobs takes a whole number ≥ 1',
  allExcludes: 'all excludes --repeat, --only, --no-regression, --keep and --server',
  noSuchCheck: '--only {ids}: no such check. Checks: {known}',
  noSuchCheckUpTo: '--only {ids}: no such check up to stage {stage}. Checks: {known}',
  jsonFullOnly: '--json records full grades only: drop --only / --no-regression',
  startTimeoutSeconds: '--start-timeout takes a number of seconds',
  unknownStage: 'unknown stage "{name}". Stages: {stages}',
})

/** An unknown stage on any command's line, said as a refusal. */
export const unknownStage = (error: UnknownStageError): Phrase => refusal('unknownStage', { name: error.stageName, stages: error.stages })
