// Progress for a replay whose output is not a terminal (CI, a pipe, a log
// file): the bar cannot redraw there, so one plain line per 10 % instead of
// minutes of silence.
import type { ReplayProgress } from './replayer.ts'

export function progressLines(label: string, print: (line: string) => void = console.log) {
  const t0 = performance.now()
  let lastTenth = 0
  return (p: ReplayProgress) => {
    const tenth = p.total === 0 ? 10 : Math.floor((p.done / p.total) * 10)
    if (tenth <= lastTenth) return
    lastTenth = tenth
    const seconds = (performance.now() - t0) / 1000
    print(
      `${label}: ${tenth * 10}% (${p.done.toLocaleString('en')}/${p.total.toLocaleString('en')} lines, ${p.sent.toLocaleString('en')} requests, ${seconds.toFixed(0)} s)`,
    )
  }
}
