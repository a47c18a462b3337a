// The score summary as a spreadsheet or a gradebook takes it: one row per
// learner, best first; points per stage (stage k: the learner's stage-k folder
// on stage k's own checks), the total, then points per check.
import { stringify } from 'csv-stringify/sync'
import { notPassed, type Summary } from './summary.ts'

export function renderCsv(s: Summary): string {
  const header = [
    'learner',
    ...s.stages.map((st) => `stage ${st}`),
    'total',
    'max',
    'percent',
    'outcome',
    'graded_at',
    'not_passed',
    'rerun',
    ...s.checks.map((c) => `${c.stage}:${c.id}`),
  ]
  // A learner never graded has empty cells, not zeros: a gradebook must not read "no run" as "0 points".
  const rows = s.learners.map((l) =>
    l.outcome === 'not graded'
      ? notGradedRow(l.learner, s)
      : [
          l.learner,
          ...s.stages.map((st) => l.stages.find((x) => x.stage === st)?.points ?? ''),
          l.total,
          l.maxTotal,
          l.maxTotal ? Math.round((l.total / l.maxTotal) * 1000) / 10 : 0,
          l.outcome,
          l.stages
            .map((p) => p.run.gradedAt)
            .sort()
            .at(-1) ?? '',
          notPassed(l)
            .map((p) => p.stage)
            .join(' '),
          notPassed(l)
            .map((p) => p.run.rerun)
            .join(' ; '),
          ...l.checks.map((c) => c?.points ?? ''),
        ],
  )
  // Folder names are learner-controlled: a name like =HYPERLINK(...) must stay text in a spreadsheet.
  return stringify([header, ...rows], { escape_formulas: true })
}

function notGradedRow(learner: string, s: Summary): string[] {
  const blanks = (n: number) => Array<string>(n).fill('')
  return [learner, ...blanks(s.stages.length + 3), 'not graded', ...blanks(3 + s.checks.length)]
}
