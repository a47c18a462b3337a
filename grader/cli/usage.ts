// The usage of the learner's commands (grade, watch, serve, hint, reset), in
// the learner's language: printed by --help and under a command line the
// command refuses. Each option's description is a template the packs
// translate (i18n/<lang>.json, "messages": <command>Usage.<key>); its line
// breaks are the translation's own, and this module lays the lines out under
// the option's name. The commands' names, options and values (--dir PATH, N,
// en) are the same in every language. Its own module, without a main, so that
// the phrasebook (grader/phrasebook.ts) registers its templates.
import type { Lang } from '#harness/i18n/language.ts'
import { type Line, phrases, say } from '#harness/i18n/phrase.ts'
import { ALLOW_UNCONFINED } from '#harness/isolation.ts'
import { HISTORIES_DEFAULT } from '../model/historyCount.ts'
import { DEFAULT_TIME_LIMIT_S } from '../roster/roster.ts'
import { JOB_INDEX_VARIABLE } from '../roster/rosterList.ts'

/** One line of a usage: an option (its name as typed, indented by `indent`, and what it does) or a paragraph. */
type Row = { option: string; indent?: number; does: Line } | { paragraph: Line; indent?: number } | 'blank'

/** A command's usage: its synopsis, then its rows, each option's description starting at `column`. */
export type Usage = { synopsis: string; column: number; rows: Row[] }

const heading = phrases('usage', {
  synopsis: 'usage: {synopsis}',
})

/**
 * The usage in `lang`. An option's description starts on its line at
 * `column` when the name leaves a space before it, else on the next line;
 * its further lines start at `column` too.
 */
export function usageText(usage: Usage, lang: Lang): string {
  const lines = [say(lang, heading('synopsis', { synopsis: usage.synopsis })), '']
  const under = ' '.repeat(usage.column)
  for (const row of usage.rows) {
    if (row === 'blank') lines.push('')
    else if ('paragraph' in row)
      lines.push(
        ...say(lang, row.paragraph)
          .split('\n')
          .map((line) => ' '.repeat(row.indent ?? 0) + line),
      )
    else {
      const [first, ...more] = say(lang, row.does).split('\n')
      const name = ' '.repeat(row.indent ?? 2) + row.option
      lines.push(name.length < usage.column ? name.padEnd(usage.column) + first : `${name}\n${under}${first}`)
      lines.push(...more.map((line) => under + line))
    }
  }
  return lines.join('\n')
}

const loop = phrases('loopUsage', {
  only: 'run only this check (repeatable: --only a --only b)',
  noRegression: "only the stage's own checks, not the earlier stages'",
  keep: 'leave the server of the first failure running, and print\nits URL, admin token, API keys and accounts',
  startTimeout: 'seconds a server that is alive may take to start\n(default: LAB_START_TIMEOUT_S, else 60)',
})

const grade = phrases('gradeUsage', {
  stage:
    "0, stage0, or a slug such as unique-key; none: the first stage\nnot yet passed (each stage's last full grade of stages/ is\nremembered in .lab/progress.json)",
  all: 'every stage, each on its own folder, then your progress',
  solution: 'grade the reference solution instead of stages/',
  dir: 'grade the learner files of another checkout of the course',
  server:
    'grade the server CMD starts, in any language (CONTRACT.md,\n"Grading your own server"); checks that need the stage\'s\nTypeScript or its SQLite file are skipped. It runs in the\ncurrent folder, or in --dir PATH when given',
  seed: 'reproduce a run (every random input comes from the seed)',
  repeat: 'grade N times with seeds N, N+1, ... and report failures out of N',
  json: 'write the result as JSON',
  format:
    "with --json, of one grade: write the result in an autograder\nplatform's shape instead, gradescope (results.json) or\nclassroom50 (result.json); docs/instructors.md",
  verbose: 'print every request and response',
  lang: 'the language it speaks: en, zh-CN or ko (zh, zh-Hans and\nzh_CN.UTF-8 also pick zh-CN), remembered in .lab/ (default:\na locale such as LANG=ko_KR.UTF-8 naming zh-CN or ko, else\nthe one remembered, else en); requests, responses, --json\nand rosters stay English',
  noSandbox:
    "run the learner's code without the bubblewrap sandbox (used when\nbwrap is available; a roster refuses to run without it). Without\nit, a grader that is root runs the code as nobody",
  requireIsolation: 'refuse (exit 2) to run the code with neither the sandbox nor\nanother user, unless {variable}=1; --format implies it',
  realClock: "wait out every lease and TTL on the host's clock instead of\nmoving the grade's clock (slower; as for a --server without\nPUT /admin/clock)",
  histories:
    'random histories each histories check runs (default {sqlite},\n{postgres} on stage 6, whose histories run on PostgreSQL);\nmore find rarer combinations, and take longer',
  coverage: "after the grade, list the model's transitions each histories\ncheck reached (with --repeat N: on how many of the N seeds)",
  roster:
    'grade every checkout under DIR (folder name = learner id),\nevery stage (or only <stage>, or a list such as 3,4), in\nparallel, each stage of each checkout in its own process;\nresults go to the store',
  store: 'the results store (default results/grades.sqlite)',
  timeLimit: 'seconds per stage of a checkout before it is stopped (default {seconds})',
  jobs: 'checkouts graded at a time (default: the number of cores)',
  regrade: 'grade again what the store already holds from this roster\n(a rerun otherwise grades only what is missing)',
  rosterList:
    "grade <stage> of ONE checkout of FILE (one folder a line, blank\nlines and # comments skipped): the I-th, counting from 0, or with\nenv {variable}'s (a Kubernetes Indexed Job). Graded as\n--dir, never unconfined (as --require-isolation); --json gets its\nlearner (the folder's name) and gradedAt, for scores:import",
})

export const GRADE_USAGE: Usage = {
  synopsis: 'npm run grade -- [<stage|all>] [options]',
  column: 19,
  rows: [
    { option: '<stage>', does: grade('stage') },
    { option: 'all', does: grade('all') },
    { option: '--solution', does: grade('solution') },
    { option: '--dir PATH', does: grade('dir') },
    { option: '--server "CMD"', does: grade('server') },
    { option: '--seed N', does: grade('seed') },
    { option: '--repeat N', does: grade('repeat') },
    { option: '--json FILE', does: grade('json') },
    { option: '--format F', does: grade('format') },
    { option: '--verbose', does: grade('verbose') },
    { option: '--lang L', does: grade('lang') },
    { option: '--only ID', does: loop('only') },
    { option: '--no-regression', does: loop('noRegression') },
    { option: '--keep', does: loop('keep') },
    { option: '--start-timeout S', does: loop('startTimeout') },
    { option: '--no-sandbox', does: grade('noSandbox') },
    { option: '--require-isolation', does: grade('requireIsolation', { variable: ALLOW_UNCONFINED }) },
    { option: '--real-clock', does: grade('realClock') },
    { option: '--histories N', does: grade('histories', { sqlite: HISTORIES_DEFAULT.sqlite, postgres: HISTORIES_DEFAULT.postgres }) },
    { option: '--coverage', does: grade('coverage') },
    'blank',
    { option: '--roster DIR', does: grade('roster') },
    { option: '--store FILE', indent: 4, does: grade('store') },
    { option: '--time-limit S', indent: 4, does: grade('timeLimit', { seconds: DEFAULT_TIME_LIMIT_S }) },
    { option: '--jobs N', indent: 4, does: grade('jobs') },
    { option: '--regrade', indent: 4, does: grade('regrade') },
    { option: '--roster-list FILE --roster-index I|env', does: grade('rosterList', { variable: JOB_INDEX_VARIABLE }) },
  ],
}

const seeGrade = phrases('langUsage', {
  speaks: 'the language it speaks: en, zh-CN or ko (as npm run grade -- --help says)',
  ofLines: "the language of these lines: en, zh-CN or ko (as npm run grade -- --help says);\nthe bank's own log stays English",
  ofHints: 'the language of the hints: en, zh-CN or ko (as npm run grade -- --help says)',
})

const watch = phrases('watchUsage', {
  stage: '0, stage0, or a slug such as unique-key',
  all: 'run every check, not only up to the first failure',
  solution: 'watch the reference solution instead of stages/',
  dir: 'watch the learner files of another checkout of the course',
  seed: 'the seed of every grade (default: a new one each time)',
  keys: 'On a terminal: h shows the next hint, n watches the next stage, a runs every\ncheck once, q quits (as Ctrl-C does, with exit code 0).',
})

export const WATCH_USAGE: Usage = {
  synopsis: 'npm run watch -- <stage> [--all] [--solution | --dir PATH] [--seed N] [--lang L]',
  column: 15,
  rows: [
    { option: '<stage>', does: watch('stage') },
    { option: '--all', does: watch('all') },
    { option: '--solution', does: watch('solution') },
    { option: '--dir PATH', does: watch('dir') },
    { option: '--seed N', does: watch('seed') },
    { option: '--lang L', does: seeGrade('speaks') },
    'blank',
    { paragraph: watch('keys') },
  ],
}

const serve = phrases('serveUsage', {
  stage: '0, stage0, or a slug such as unique-key (default 0)',
  solution: 'serve the reference solution instead of stages/',
  port: 'the port on 127.0.0.1 (default 3000)',
  fresh: 'start from an empty database (each stage keeps its own bank-NN-slug.sqlite)',
  demo: 'create a client and two funded accounts, and print curl lines to try them',
  clock:
    "the bank's clock stands at MS (ms since the epoch) until PUT /admin/clock\nmoves it, as in a grade (a failing history's replay starts it so); the\nadmin token is then adm_ and 32 hex digits, the only kind the bank obeys for that",
  environment: 'LAB_DB and LAB_ADMIN_TOKEN override the database file and the admin token\n(otherwise a new random token per run, printed at the start)',
})

export const SERVE_USAGE: Usage = {
  synopsis: 'npm run serve -- [<stage>] [--solution] [--port N] [--fresh] [--demo] [--clock MS] [--lang L]',
  column: 15,
  rows: [
    { option: '<stage>', does: serve('stage') },
    { option: '--solution', does: serve('solution') },
    { option: '--port N', does: serve('port') },
    { option: '--fresh', does: serve('fresh') },
    { option: '--demo', does: serve('demo') },
    { option: '--clock MS', does: serve('clock') },
    { option: '--lang L', does: seeGrade('ofLines') },
    { paragraph: serve('environment'), indent: 2 },
  ],
}

const hint = phrases('hintUsage', {
  stage: '0, stage0, or a slug such as unique-key: shows its hints seen so far, and one more',
  reset: "hide the stage's hints again",
})

export const HINT_USAGE: Usage = {
  synopsis: 'npm run hint -- <stage> [--reset] [--lang L]',
  column: 12,
  rows: [
    { option: '<stage>', does: hint('stage') },
    { option: '--reset', does: hint('reset') },
    { option: '--lang L', does: seeGrade('ofHints') },
  ],
}

const reset = phrases('resetUsage', {
  stage:
    '0, stage0, or a slug such as unique-key: puts back the starter of the\nfiles you edit in its folder (course.json\'s "edits"), after listing\nthem and asking; its README, files you added and everything\noutside the folder stay as they are',
  yes: 'restore without asking (needed when stdin is not a terminal)',
})

export const RESET_USAGE: Usage = {
  synopsis: 'npm run reset -- <stage> [--yes] [--lang L]',
  column: 12,
  rows: [
    { option: '<stage>', does: reset('stage') },
    { option: '--yes', does: reset('yes') },
    { option: '--lang L', does: seeGrade('speaks') },
  ],
}
