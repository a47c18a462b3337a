// `npm run replay -- all` as one picture: a self-contained HTML page (inline
// SVG, no script, no network) with one panel per damage category, a bar per
// stage stacked by incident kind, and the figures as a table underneath.
// Every panel shares one scale, so bar heights compare across panels, and
// every bar says whose code it ran (an untouched starter is drawn faded).
import { KINDS, kindRow } from '../logs/faults.ts'
import { CATEGORIES, type DamageReport } from './damage.ts'
import { shortWon } from './report.ts'

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!)

/** Under each bar: whose code ran. */
const CODE_LABEL = { learner: 'learner', 'untouched starter': 'untouched', solution: 'solution' } as const

/** The tallest bar of any panel: the one scale all panels share. */
const sharedMax = (reports: DamageReport[]) => Math.max(1, ...reports.flatMap((r) => CATEGORIES.map((c) => r[c.id])))

function panel(reports: DamageReport[], c: (typeof CATEGORIES)[number], max: number): string {
  const W = 300
  const H = 202
  const top = 40
  const bottom = 42
  const plotH = H - top - bottom
  const barW = Math.min(36, (W - 40) / reports.length - 8)
  const parts: string[] = [
    `<text x="10" y="18" class="t">${esc(c.title)}</text>`,
    `<line x1="20" y1="${H - bottom}" x2="${W - 10}" y2="${H - bottom}" class="axis"/>`,
  ]
  reports.forEach((r, i) => {
    const x = 28 + i * ((W - 40) / reports.length)
    let y = H - bottom
    const faded = r.code === 'untouched starter' ? ' opacity="0.35"' : ''
    for (const k of KINDS) {
      const n = r.byKind[k][c.id]
      if (!n) continue
      const h = (n / max) * plotH
      y -= h
      parts.push(
        `<rect x="${x}" y="${y.toFixed(1)}" width="${barW}" height="${h.toFixed(1)}" fill="${kindRow(k).color}"${faded}><title>stage ${r.stage} (${r.code}), ${k}: ${n} (${shortWon(r.byKind[k][c.amount])})</title></rect>`,
      )
    }
    parts.push(`<text x="${x + barW / 2}" y="${y - 4}" class="n">${r[c.id]}</text>`)
    parts.push(`<text x="${x + barW / 2}" y="${H - bottom + 14}" class="n">stage ${r.stage}</text>`)
    parts.push(`<text x="${x + barW / 2}" y="${H - bottom + 26}" class="n code">${CODE_LABEL[r.code]}</text>`)
  })
  return `<svg width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(c.title)}">${parts.join('')}</svg>`
}

function figuresTable(reports: DamageReport[]): string {
  const head = `<tr><th>category</th><th>incident kind</th>${reports.map((r) => `<th>stage ${r.stage}<br><small>${esc(r.slug)} · ${esc(r.code)}</small></th>`).join('')}</tr>`
  const rows = CATEGORIES.flatMap((c) => {
    const kinds = KINDS.filter((k) => reports.some((r) => r.byKind[k][c.id] > 0))
    const line = (label: string, pick: (r: DamageReport) => { n: number; won: number }, cls = '') =>
      `<tr class="${cls}"><td>${cls ? esc(c.title) : ''}</td><td>${esc(label)}</td>${reports
        .map((r) => {
          const { n, won } = pick(r)
          return `<td>${n ? `${n} <small>${shortWon(won)}</small>` : '·'}</td>`
        })
        .join('')}</tr>`
    return [
      line('total', (r) => ({ n: r[c.id], won: r[c.amount] }), 'total'),
      ...kinds.map((k) => line(k, (r) => ({ n: r.byKind[k][c.id], won: r.byKind[k][c.amount] }))),
    ]
  })
  return `<table>${head}${rows.join('')}</table>`
}

export function chartHtml(reports: DamageReport[]): string {
  const first = reports[0]!
  const legend = KINDS.map((k) => `<span><i style="background:${kindRow(k).color}"></i>${k}</span>`).join('')
  const definitions = CATEGORIES.map((c) => `<dt>${esc(c.title)}</dt><dd>${esc(c.explain)}</dd>`).join('')
  const max = sharedMax(reports)
  const untouched = reports.filter((r) => r.code === 'untouched starter').map((r) => r.stage)
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>The day, replayed on every stage</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}
.grid{display:flex;flex-wrap:wrap;gap:12px}.grid svg{border:1px solid #ddd;border-radius:6px;background:#fff}
.t{font-weight:600;font-size:13px}.n{font-size:10px;text-anchor:middle;fill:#333}.code{fill:#777}.axis{stroke:#999}
.legend span{display:inline-block;margin:0 12px 6px 0}.legend i{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;margin-top:20px}td,th{border-bottom:1px solid #eee;padding:3px 10px;text-align:right}td:nth-child(-n+2),th:nth-child(-n+2){text-align:left}
tr.total td{border-top:1px solid #bbb;font-weight:600}small{color:#777;font-weight:400}dt{font-weight:600;margin-top:6px}dd{margin-left:16px}
</style></head><body>
<h1>The day, replayed on every stage</h1>
<p>${first.day.lines} attempts (${first.day.intents} intents) from <code>${esc(first.day.file)}</code> (sha256 ${first.day.sha256.slice(0, 16)}…), replayed on ${reports.length} stage(s) (${esc(first.source)}) with real faults: dropped responses, reset connections, and a SIGKILL of the server with requests in flight. Each panel counts one kind of damage; each bar is a stage, coloured by the incident that caused it, and labelled with whose code ran: <b>learner</b> (your files), <b>untouched</b> (the starter as shipped: a stage not begun yet, whose figures are the starter's, drawn faded) or <b>solution</b> (the reference answer).</p>
<p><b>One scale for every panel:</b> a full-height bar is ${max.toLocaleString('en')}; the figure above each bar is its count.${untouched.length ? ` Stage(s) ${untouched.join(', ')} ran the untouched starter.` : ''}</p>
<div class="legend">${legend}</div>
<div class="grid">${CATEGORIES.map((c) => panel(reports, c, max)).join('\n')}</div>
${figuresTable(reports)}
<h2>What each category counts</h2><dl>${definitions}</dl>
<p><small>${reports.map((r) => `stage ${r.stage}: ${r.requests} requests in ${(r.replayMs / 1000).toFixed(1)} s`).join(' · ')}</small></p>
</body></html>
`
}
