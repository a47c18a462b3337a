// A failing history, shown two ways: as text lines in the grade's report, one
// per step, and as a self-contained HTML sequence diagram with one lane per
// instance and one for the database and its ledger. Every string that came
// from the server is escaped: the page runs no script and fetches nothing.
import { toCurl } from '#harness/http.ts'
import type { HistoryRun, Step } from './runHistory.ts'
import { ruleLabel } from './runHistory.ts'
import { escapeHtml } from '../output/escapeHtml.ts'

export type ShownFailure = { run: HistoryRun; stage: number; seed: number; instances: string[]; rerun: string }

/** The history as report lines, the failing step marked, with expected against got. */
export function timelineText(f: ShownFailure): string[] {
  const { steps, mismatch } = f.run
  const width = String(steps.length).length
  const lines = steps.map((s) => {
    const at = s.instance === undefined ? '' : `[${f.instances[s.instance] ?? s.instance}] `
    const effects = [s.clock && `clock ${s.clock}`, s.ledger && `ledger ${s.ledger}`].filter(Boolean).join('; ')
    const mark = mismatch?.step === s.index ? '✗' : ' '
    return `${mark} ${String(s.index).padStart(width)}  ${at}${s.what}${s.answer ? `  →  ${s.answer}` : ''}${effects ? `   (${effects})` : ''}`
  })
  if (mismatch)
    lines.push(
      `step ${mismatch.step} left what the contract allows${ruleLabel(mismatch.rule)}:`,
      `  expected: ${mismatch.expected}`,
      `  got:      ${mismatch.got}`,
    )
  return lines
}

/** The history as one HTML page: a sequence diagram read top to bottom. */
export function timelineHtml(f: ShownFailure): string {
  const lanes = [...f.instances, 'database and ledger']
  const { steps, mismatch } = f.run
  const row = (s: Step) => {
    const failed = mismatch?.step === s.index
    const cells = lanes.map((_, lane) => {
      const isLedger = lane === lanes.length - 1
      if (isLedger) return `<td class="lane ledger">${s.ledger ? escapeHtml(s.ledger) : ''}</td>`
      if (s.instance !== lane && !(s.instance === undefined && lane === 0 && !s.clock)) return '<td class="lane"></td>'
      return `<td class="lane hit"><div class="arrow">${escapeHtml(s.what)}</div>${s.answer ? `<div class="answer">${escapeHtml(s.answer)}</div>` : ''}</td>`
    })
    const clock = s.clock ? `<td class="clock">clock ${escapeHtml(s.clock)}</td>` : '<td class="clock"></td>'
    return `<tr class="step${failed ? ' failed' : ''}" data-step="${s.index}"><th>${s.index}</th>${clock}${cells.join('')}</tr>`
  }
  const verdict = mismatch
    ? `<section class="verdict"><h2>Step ${mismatch.step} left what the contract allows${escapeHtml(ruleLabel(mismatch.rule))}</h2>
<p><b>expected</b> ${escapeHtml(mismatch.expected)}</p><p><b>got</b> ${escapeHtml(mismatch.got)}</p></section>`
    : ''
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Stage ${f.stage} history, seed ${f.seed}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%}
th,td{border-bottom:1px solid #ddd;padding:.4em;vertical-align:top;text-align:left}
thead th{background:#f4f4f4}
td.lane{border-left:2px solid #bbb;min-width:12em}
td.hit .arrow::before{content:"→ ";color:#888}
td.hit .answer{color:#0a5;margin-top:.2em}
td.hit .answer::before{content:"← "}
td.ledger{color:#555;font-family:ui-monospace,monospace}
td.clock{color:#a60;white-space:nowrap}
tr.failed{background:#fde8e8}
tr.failed td.hit .answer{color:#b00;font-weight:bold}
.verdict{border:2px solid #b00;padding:.5em 1em;margin-top:1em}
code{background:#f4f4f4;padding:.1em .3em}
</style></head><body>
<h1>Stage ${f.stage}: the shortest failing history (seed ${f.seed})</h1>
<p>Each row is one step, read from top to bottom: what was sent to which instance and what came back, the clock's moves and the ledger's changes.</p>
<table><thead><tr><th>#</th><th>clock</th>${lanes.map((l) => `<th class="lane-name">${escapeHtml(l)}</th>`).join('')}</tr></thead>
<tbody>${steps.map(row).join('\n')}</tbody></table>
${verdict}
<p>Replay it: <code>${escapeHtml(f.rerun)}</code></p>
<h2>Every request, as curl</h2>
<ol class="curl">${steps
    .filter((s) => s.exchange)
    .map((s) => `<li data-step="${s.index}"><code>${escapeHtml(toCurl(s.exchange!.request))}</code></li>`)
    .join('\n')}</ol>
</body></html>
`
}
