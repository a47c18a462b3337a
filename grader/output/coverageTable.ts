// `grade --coverage`: the model's transitions a grade's histories reached,
// per histories check, over every run of a --repeat (how many seeds reached
// each, and how many histories took it). The evidence behind "the histories
// explore": a transition no seed reaches is a gap in the generators.
import type { GradeResult } from '../grade.ts'

export function coverageLines(runs: GradeResult[]): string[] {
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
    lines.push(
      `${id}: ${everySeed} of ${reachable.length} reachable transitions reached on every one of ${tables.length} seed(s); ${reachable.filter((r) => r.seeds === 0).length} on none`,
      `  seeds  histories  transition`,
    )
    for (const [transition, r] of rows)
      lines.push(
        r.unreachable
          ? `      –          –  ${transition}  (unreachable here: ${r.unreachable})`
          : `  ${`${r.seeds}/${tables.length}`.padStart(5)}  ${String(r.histories).padStart(9)}  ${transition}`,
      )
  }
  return lines.length ? lines : ['no histories check ran: nothing to cover']
}
