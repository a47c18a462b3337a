// The score summary as a terminal prints it.
import chalk from 'chalk'
import type { StoredCheck } from '../roster/store.ts'
import { mostFailed, notPassed, type StagePoints, type Summary } from './summary.ts'

export const MARKS: Record<StoredCheck['status'], string> = { pass: '✓', fail: '✗', timeout: 'T', error: '!', skipped: '–', 'not-judged': '?' }

const pct = (rate: number) => `${Math.round(rate * 100)}%`

export function renderText(s: Summary, store: string): string {
  const out: string[] = []
  const n = s.learners.length
  const notGraded = s.notGraded ? `, ${s.notGraded} not graded` : ''
  out.push(
    chalk.bold(`Scores · ${n} learner${n === 1 ? '' : 's'}${notGraded} · stage k: the latest grade of their stage-k folder, stage k's own checks`) +
      chalk.dim(`  (${store})`),
  )
  if (n === 0) {
    out.push('No runs yet: grade a class with `npm run grade -- <stage> --roster DIR` or import CI results.')
    return out.join('\n')
  }

  // Learner × stage points, best first.
  const nameWidth = Math.max(7, ...s.learners.map((l) => l.learner.length))
  const cell = (text: string) => text.padStart(9)
  out.push('', chalk.bold(` #  ${'learner'.padEnd(nameWidth)} ${s.stages.map((st) => cell(`stage ${st}`)).join('')}${cell('total')}      %`))
  s.learners.forEach((l, i) => {
    if (l.outcome === 'not graded')
      return out.push(`${String(i + 1).padStart(2)}  ${l.learner.padEnd(nameWidth)} ${s.stages.map(() => cell('—')).join('')}${chalk.yellow('   not graded')}`)
    const stages = s.stages.map((st) => {
      const p = l.stages.find((x) => x.stage === st)
      return cell(p ? `${p.points}/${p.maxPoints}${cellMark(p)}` : '—')
    })
    const flag =
      l.outcome === 'graded'
        ? ''
        : chalk.yellow(
            `  (${l.stages
              .filter((p) => p.run.outcome !== 'graded')
              .map((p) => `stage ${p.stage}: ${p.run.outcome}`)
              .join(', ')})`,
          )
    out.push(
      `${String(i + 1).padStart(2)}  ${l.learner.padEnd(nameWidth)} ${stages.join('')}${cell(`${l.total}/${l.maxTotal}`)} ${pct(l.maxTotal ? l.total / l.maxTotal : 0).padStart(6)}${flag}`,
    )
  })

  out.push(chalk.dim("  * earlier stages' checks (regression) also fail on that folder   T time limit   ! grader failed   — not graded"))

  // Pass or fail per check; the columns are the learners, numbered as above.
  const labels = s.checks.map((c) => `${c.id} (${c.maxPoints} pt)`)
  const labelWidth = Math.max(...labels.map((l) => l.length)) + 1
  const col = Math.max(2, String(n).length + 1)
  out.push('', chalk.bold('Checks') + chalk.dim('  ✓ pass  ✗ fail  T timed out  ! could not run  ? not judged (another check fails first)  · not graded'))
  out.push(`${' '.repeat(labelWidth + 4)}${s.learners.map((_, i) => String(i + 1).padStart(col)).join('')}   pass rate`)
  let lastStage = -1
  s.checkStats.forEach((c, j) => {
    if (c.stage !== lastStage) out.push(chalk.dim(`  stage ${(lastStage = c.stage)}`))
    const marks = s.learners.map((l) => {
      const r = l.checks[j]
      const mark = r ? MARKS[r.status] : '·'
      return (r?.status === 'pass' ? chalk.green : r && r.status !== 'not-judged' ? chalk.red : chalk.dim)(mark.padStart(col))
    })
    out.push(`    ${labels[j]!.padEnd(labelWidth)}${marks.join('')}   ${c.passed}/${c.graded} ${pct(c.rate)}`)
  })

  const failing = mostFailed(s)
  out.push('', chalk.bold('Failed most'))
  if (failing.length === 0) out.push('  every graded check passes for every learner')
  for (const c of failing)
    out.push(
      `  ${pct(c.rate).padStart(4)} pass  ${c.id} (stage ${c.stage})${chalk.dim(`  ${c.graded - c.passed} failing, most often: ${clip(c.commonReason)}`)}`,
    )

  out.push('', chalk.bold('Stages not passed, and how to rerun them'))
  s.learners.forEach((l, i) => {
    const open = notPassed(l)
    if (l.outcome === 'not graded')
      out.push(`${String(i + 1).padStart(2)}  ${l.learner.padEnd(nameWidth)} ${chalk.yellow('not graded: no run of theirs is stored')}`)
    else if (open.length === 0) out.push(`${String(i + 1).padStart(2)}  ${l.learner.padEnd(nameWidth)} every graded stage passes`)
    for (const p of open)
      out.push(
        `${String(i + 1).padStart(2)}  ${l.learner.padEnd(nameWidth)} stage ${p.stage} seed ${String(p.run.seed).padEnd(8)} ${chalk.dim(p.run.gradedAt)}  ${p.run.rerun}`,
      )
  })
  return out.join('\n')
}

function cellMark(p: StagePoints): string {
  return p.run.outcome === 'time limit' ? ' T' : p.run.outcome === 'grader failed' ? ' !' : p.regressionFailed > 0 ? '*' : ''
}

function clip(text: string, max = 90): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
