// The score summary as one static HTML file: inline CSS and SVG, no script,
// no network (a Content-Security-Policy says so), so it can be mailed or
// archived as is. Learner ids are folder names, i.e. learner-controlled: every
// text goes through escapeHtml().
import { course } from '#harness/course.ts'
import { mostFailed, notPassed, type CheckStat, type StageStat, type Summary } from './summary.ts'
import { MARKS } from './text.ts'
import { escapeHtml } from '../output/escapeHtml.ts'

const pct = (rate: number) => `${Math.round(rate * 100)}%`

export function renderHtml(s: Summary, generatedAt = new Date()): string {
  const n = s.learners.length
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Scores · ${escapeHtml(course.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>Scores · ${escapeHtml(course.title)}</h1>
<p class="meta">${n} learner${n === 1 ? '' : 's'}${s.notGraded ? `, ${s.notGraded} not graded` : ''} · stage k: the latest grade of each learner's stage-k folder, on stage k's own checks · generated ${escapeHtml(generatedAt.toISOString())}</p>
<section>
<h2>Pass rate per stage</h2>
<p class="meta">The share of learners who pass every check of the stage.</p>
${stageChart(s.stageStats)}
</section>
<section>
<h2>Pass rate per check</h2>
${checkChart(s.checkStats)}
</section>
<section>
<h2>Learners</h2>
${learnerTable(s)}
</section>
<section>
<h2>Checks</h2>
${checkTable(s)}
</section>
<section>
<h2>Failed most</h2>
${failedMost(s)}
</section>
</body>
</html>
`
}

const color = (rate: number) => (rate >= 0.8 ? '#2e7d32' : rate >= 0.5 ? '#ef8f00' : '#c62828')

/** Vertical bars, one per stage; a bar's height is the stage's pass rate times PLOT_H. */
function stageChart(stats: StageStat[]): string {
  const PLOT_H = 200
  const BAR_W = 48
  const GAP = 28
  const left = 44
  const top = 20
  const width = left + stats.length * (BAR_W + GAP) + GAP
  const grid = [0, 0.5, 1]
    .map((r) => {
      const y = top + PLOT_H - r * PLOT_H
      return `<line class="grid" x1="${left}" x2="${width}" y1="${y}" y2="${y}"/><text class="axis" x="${left - 6}" y="${y + 4}" text-anchor="end">${pct(r)}</text>`
    })
    .join('')
  const bars = stats
    .map((st, i) => {
      const x = left + GAP + i * (BAR_W + GAP)
      const h = st.rate * PLOT_H
      const tip = `stage ${st.stage} · ${st.title}: ${st.passedAll} of ${st.graded} learners pass every check`
      return `<g class="stage" data-stage="${st.stage}">
<rect class="bar" data-rate="${st.rate}" x="${x}" y="${top + PLOT_H - h}" width="${BAR_W}" height="${h}" fill="${color(st.rate)}"><title>${escapeHtml(tip)}</title></rect>
<text class="value" x="${x + BAR_W / 2}" y="${top + PLOT_H - h - 5}" text-anchor="middle">${pct(st.rate)}</text>
<text class="label" x="${x + BAR_W / 2}" y="${top + PLOT_H + 16}" text-anchor="middle">stage ${st.stage}</text>
</g>`
    })
    .join('\n')
  return `<svg id="stage-chart" role="img" aria-label="Pass rate per stage" width="${width}" height="${top + PLOT_H + 28}" data-plot-height="${PLOT_H}" xmlns="http://www.w3.org/2000/svg">
${grid}
<line class="axis-line" x1="${left}" x2="${width}" y1="${top + PLOT_H}" y2="${top + PLOT_H}"/>
${bars}
</svg>`
}

/** Horizontal bars, one per check, grouped by stage; a bar's width is the pass rate times the track's. */
function checkChart(stats: CheckStat[]): string {
  const LABEL_W = 280
  const TRACK_W = 400
  const ROW_H = 22
  let y = 8
  let lastStage = -1
  const rows: string[] = []
  for (const c of stats) {
    if (c.stage !== lastStage) {
      lastStage = c.stage
      y += 6
      rows.push(`<text class="stage-label" x="0" y="${y + 12}">stage ${c.stage}</text>`)
      y += ROW_H
    }
    const tip = `${c.title}: ${c.passed} of ${c.graded} pass`
    rows.push(`<g class="check" data-check="${escapeHtml(`${c.stage}:${c.id}`)}">
<text class="label" x="${LABEL_W - 8}" y="${y + 12}" text-anchor="end">${escapeHtml(c.id)}</text>
<rect class="track" x="${LABEL_W}" y="${y}" width="${TRACK_W}" height="15"/>
<rect class="bar" data-rate="${c.rate}" x="${LABEL_W}" y="${y}" width="${c.rate * TRACK_W}" height="15" fill="${color(c.rate)}"><title>${escapeHtml(tip)}</title></rect>
<text class="value" x="${LABEL_W + TRACK_W + 8}" y="${y + 12}">${pct(c.rate)} (${c.passed}/${c.graded})</text>
</g>`)
    y += ROW_H
  }
  return `<svg id="check-chart" role="img" aria-label="Pass rate per check" width="${LABEL_W + TRACK_W + 90}" height="${y + 8}" xmlns="http://www.w3.org/2000/svg">
${rows.join('\n')}
</svg>`
}

function learnerTable(s: Summary): string {
  const head = `<tr><th>#</th><th>learner</th>${s.stages.map((st) => `<th>stage ${st}</th>`).join('')}<th>total</th><th>not passed: rerun</th></tr>`
  const body = s.learners
    .map((l, i) => {
      if (l.outcome === 'not graded')
        return `<tr><td>${i + 1}</td><td class="learner">${escapeHtml(l.learner)}</td>${s.stages.map(() => '<td>—</td>').join('')}<td class="none">not graded</td><td></td></tr>`
      const stages = s.stages
        .map((st) => {
          const p = l.stages.find((x) => x.stage === st)
          const regression = p && p.regressionFailed > 0 ? `<span class="ko" title="earlier stages' checks fail on this folder">*</span>` : ''
          return p ? `<td class="${p.passedAll ? 'ok' : 'ko'}">${p.points}/${p.maxPoints}${regression}</td>` : '<td>—</td>'
        })
        .join('')
      const unfinished = l.stages.filter((p) => p.run.outcome !== 'graded')
      const outcome =
        unfinished.length === 0
          ? ''
          : ` <span class="ko" title="${escapeHtml(unfinished.map((p) => `stage ${p.stage}: ${p.run.reason}`).join('\n'))}">(${escapeHtml(l.outcome)})</span>`
      const reruns = notPassed(l)
        .map((p) => `<code>${escapeHtml(p.run.rerun)}</code>`)
        .join('<br>')
      return `<tr><td>${i + 1}</td><td class="learner">${escapeHtml(l.learner)}${outcome}</td>${stages}<td><b>${l.total}/${l.maxTotal}</b></td><td class="left">${reruns}</td></tr>`
    })
    .join('\n')
  return `<table id="learners"><thead>${head}</thead><tbody>\n${body}\n</tbody></table>`
}

function checkTable(s: Summary): string {
  const head = `<tr><th>stage</th><th>check</th><th>points</th>${s.learners.map((l, i) => `<th title="${escapeHtml(l.learner)}">${i + 1}</th>`).join('')}<th>pass rate</th></tr>`
  const body = s.checkStats
    .map((c, j) => {
      const cells = s.learners
        .map((l) => {
          const r = l.checks[j]
          if (!r) return '<td class="none">·</td>'
          return `<td class="${r.status === 'pass' ? 'ok' : r.status === 'not-judged' ? 'none' : 'ko'}" title="${escapeHtml(`${l.learner}: ${r.message || 'pass'}`)}">${MARKS[r.status]}</td>`
        })
        .join('')
      return `<tr><td>${c.stage}</td><td class="left">${escapeHtml(c.id)}</td><td>${c.maxPoints}</td>${cells}<td>${pct(c.rate)}</td></tr>`
    })
    .join('\n')
  return `<p class="meta">Columns are the learners, numbered as above. ✓ pass, ✗ fail, T timed out, ! could not run, ? not judged (another check fails first: no points, not counted in the pass rate).</p>
<table id="checks"><thead>${head}</thead><tbody>\n${body}\n</tbody></table>`
}

function failedMost(s: Summary): string {
  const failing = mostFailed(s)
  if (failing.length === 0) return '<p>Every graded check passes for every learner.</p>'
  return `<ol>${failing
    .map((c) => `<li><b>${escapeHtml(c.id)}</b> (stage ${c.stage}): ${pct(c.rate)} pass; most often: <q>${escapeHtml(c.commonReason)}</q></li>`)
    .join('')}</ol>`
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.meta { color: #666; }
svg text { font: 12px system-ui, sans-serif; fill: #333; }
svg .stage-label { font-weight: 600; }
svg .track { fill: #eee; } svg .grid { stroke: #ddd; } svg .axis-line { stroke: #999; }
table { border-collapse: collapse; } th { white-space: nowrap; } th, td { border: 1px solid #ddd; padding: 2px 8px; text-align: center; }
td.learner, td.left { text-align: left; } td.ok { color: #2e7d32; } td.ko, span.ko { color: #c62828; } td.none { color: #aaa; }
code { font-size: 12px; }
`
