// `grade --coverage`: the model's transitions a grade's histories reached,
// per histories check, over every run of a --repeat (how many seeds reached
// each, and how many histories took it). The evidence behind "the histories
// explore": a transition no seed reaches is a gap in the generators. Said in
// the learner's language; the check ids and the numbers are the same in all.
import type { Lang } from '#harness/i18n/language.ts'
import { phrases, say } from '#harness/i18n/phrase.ts'
import { transitionSaid, unreachableSaid } from '../model/coverage.ts'
import type { GradeResult } from '../grade.ts'

const line = phrases('coverageTable', {
  summary: '{id}: {everySeed} of {reachable} reachable transitions reached on every one of {seeds} seed(s); {none} on none',
  // The columns' names: the seeds are right-aligned under the first 7 columns, the histories under the next 11.
  columns: '  seeds  histories  transition',
  unreachable: '      –          –  {transition}  (unreachable here: {why})',
  nothing: 'no histories check ran: nothing to cover',
})

export function coverageLines(runs: GradeResult[], lang: Lang): string[] {
  const lines: string[] = []
  const checks = [...new Set(runs.flatMap((r) => r.checks.filter((c) => c.coverage).map((c) => c.id)))]
  for (const id of checks) {
    const tables = runs.flatMap((r) => r.checks.filter((c) => c.id === id && c.coverage).map((c) => c.coverage!))
    const rows = new Map<string, { seeds: number; histories: number; unreachable?: string }>()
    for (const table of tables)
      for (const { transition, histories, unreachable } of table) {
        const row = rows.get(transition) ?? { seeds: 0, histories: 0, ...(unreachable ? { unreachable } : {}) }
        row.seeds += histories > 0 ? 1 : 0
        row.histories += histories
        rows.set(transition, row)
      }
    const reachable = [...rows.values()].filter((r) => !r.unreachable)
    const everySeed = reachable.filter((r) => r.seeds === tables.length).length
    const none = reachable.filter((r) => r.seeds === 0).length
    lines.push(say(lang, line('summary', { id, everySeed, reachable: reachable.length, seeds: tables.length, none })), say(lang, line('columns')))
    for (const [transition, r] of rows)
      lines.push(
        r.unreachable
          ? say(lang, line('unreachable', { transition: transitionSaid(transition), why: unreachableSaid(r.unreachable) }))
          : `  ${`${r.seeds}/${tables.length}`.padStart(5)}  ${String(r.histories).padStart(9)}  ${say(lang, transitionSaid(transition))}`,
      )
  }
  return lines.length ? lines : [say(lang, line('nothing'))]
}
