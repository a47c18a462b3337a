// A failing history, shown two ways: as text lines in the grade's report, one
// per step, and as a self-contained HTML sequence diagram: a lifeline for the
// clients, one per instance and one for the database and its ledger; each
// request an arrow from the clients to its instance and its answer an arrow
// back; the admin steps (the core held, let go or failing, a crash) notes on
// the instance they act on, the clock's moves a note across the instances and
// the database, the ledger's changes notes on the database. Below it, the
// history as a script a learner can replay on a server of their own
// (timelineReplay.ts). Every string that came from the server is escaped:
// the page runs no script and fetches nothing.
import type { HistoryRun } from './runHistory.ts'
import { ruleLabel } from './runHistory.ts'
import { type Line as Sentence, listOf, phrases } from '#harness/i18n/phrase.ts'
import { escapeHtml } from '../output/escapeHtml.ts'
import { courseRuleLabel } from '../engine/courseRule.ts'
import { type EnglishStep, inEnglish, kindOf, replayOf, timelineScriptName, type ShownFailure } from './timelineReplay.ts'

export { timelineScript, timelineScriptName } from './timelineReplay.ts'

export type { ShownFailure }

// The account's own words; a step's line describes the request as sent (evidence), and the model's expectation is its own.
const say = phrases('timeline', {
  leftContract: 'step {step} left what the contract allows:',
  leftContractRule: 'step {step} left what the contract allows ({label}):',
  expected: '  expected: {expected}',
  got: '  got:      {got}',
  step: '{mark} {index}  {at}{what}{answer}{effects}',
  answer: '  →  {answer}',
  effects: '   ({effects})',
  clock: 'clock {clock}',
  ledger: 'ledger {ledger}',
  instance: '[{instance}] ',
})

// An instance's label, in a failing history's steps: its English is also how the page and the replay script name it (timelineReplay.ts reads a replay's settings from it).
const label = phrases('instanceLabel', {
  bank: 'bank',
  first: 'instance 1',
  skewed: 'instance {n} (clock {skew} s)',
  atPeriods: '{instance} at {periods}',
})

/** The label of instance `n` (1, 2, …) of a stage's histories (histories.ts), `skewMs` its clock's offset. */
export const instanceLabel = (stage: number, n: number, skewMs: number): Sentence =>
  stage < 6 ? label('bank') : n === 1 ? label('first') : label('skewed', { n, skew: `${skewMs > 0 ? '+' : '−'}${Math.abs(skewMs) / 1000}` })

/** A label with the lease and TTL the instance was started at, when not the defaults. */
export const labelAtPeriods = (instance: Sentence, periods: string): Sentence => label('atPeriods', { instance, periods })

/** The history as report lines, the failing step marked, with expected against got. */
export function timelineText(f: ShownFailure): Sentence[] {
  const { steps, mismatch } = f.run
  const width = String(steps.length).length
  const lines = steps.map((s) => {
    const effects = [...(s.clock ? [say('clock', { clock: s.clock })] : []), ...(s.ledger ? [say('ledger', { ledger: s.ledger })] : [])]
    return say('step', {
      mark: mismatch?.step === s.index ? '✗' : ' ',
      index: String(s.index).padStart(width),
      at: s.instance === undefined ? '' : say('instance', { instance: f.instances[s.instance] ?? s.instance }),
      what: s.what,
      answer: String(s.answer) ? say('answer', { answer: s.answer }) : '',
      effects: effects.length ? say('effects', { effects: listOf(effects, 'semicolon') }) : '',
    })
  })
  if (!mismatch) return lines
  const left = mismatch.rule
    ? say('leftContractRule', { step: mismatch.step, label: courseRuleLabel(mismatch.rule) })
    : say('leftContract', { step: mismatch.step })
  return [...lines, left, say('expected', { expected: mismatch.expected }), say('got', { got: mismatch.got })]
}

/** A line of the diagram: the items of one grid row of a step, each placed in the row it is given. */
type Line = Array<(row: number) => string>

/** The history as one HTML page: a sequence diagram read top to bottom, then its replay. */
export function timelineHtml(shown: ShownFailure): string {
  const f = inEnglish(shown)
  const { steps, mismatch } = f.run
  const n = f.instances.length
  // Grid columns: 1 the step's number, 2 the clients, 3… the instances, then the database.
  const clientCol = 2
  const instCol = (i: number) => 3 + i
  const dbCol = 3 + n
  const lanes = [clientLaneName(f.run), ...f.instances, 'database and ledger']
  const e = escapeHtml
  let row = 2
  const body: string[] = []
  for (const s of steps) {
    const failed = mismatch?.step === s.index
    const lines = linesOf(s, failed)
    const first = row
    for (const items of lines) {
      body.push(...items.map((item) => item(row)))
      row++
    }
    if (failed) {
      body.push(
        `<div class="verdict" data-step="${s.index}" style="grid-column:${clientCol}/${dbCol + 1};grid-row:${row}"><b>✗ step ${s.index} left what the contract allows${e(ruleLabel(mismatch.rule))}</b><p><b>expected</b> ${e(mismatch.expected)}</p><p><b>got</b> ${e(mismatch.got)}</p></div>`,
      )
      row++
    }
    body.unshift(
      `<div class="band${failed ? ' failed' : ''}" data-step="${s.index}" style="grid-column:1/-1;grid-row:${first}/${row}"></div>`,
      `<div class="num${failed ? ' failed' : ''}" data-step="${s.index}" style="grid-column:1;grid-row:${first}/${row}">${failed ? '✗ ' : ''}${s.index}</div>`,
    )
  }
  const rows = row - 1
  const heads = lanes.map(
    (l, i) =>
      `<div class="head${i === 0 ? ' clients' : i === lanes.length - 1 ? ' db' : ''}" data-lane="${i}" style="grid-column:${clientCol + i};grid-row:1">${e(l)}</div>`,
  )
  const lifelines = lanes.map(
    (_, i) => `<div class="lifeline" data-lane="${i}" style="grid-column:${clientCol + i};grid-row:2/${Math.max(3, rows + 1)}"></div>`,
  )

  /** The rows of one step: the clock's move across the instances, then what was sent and answered, the notes and the ledger. */
  function linesOf(s: EnglishStep, failed: boolean): Line[] {
    const lines: Line[] = []
    const at = (col: number | [number, number], cls: string, html: string) => (row: number) =>
      `<div class="note ${cls}" data-step="${s.index}" style="grid-column:${Array.isArray(col) ? `${col[0]}/${col[1]}` : col};grid-row:${row}">${html}</div>`
    if (s.clock) lines.push([at([instCol(0), dbCol + 1], 'clock', `clock ${e(s.clock)}`)])
    const main: Line = []
    const skipped = s.answer.startsWith('(skipped')
    const kind = kindOf(s)
    const message = kind === 'send'
    const released = kind === 'release' || kind === 'let-go'
    if (s.instance === undefined || skipped) {
      // Nothing reached an instance: a clock move (its note above), or a step the grade skipped.
      if (!s.clock || s.answer)
        main.push(at(s.instance === undefined ? [instCol(0), dbCol] : instCol(s.instance), `admin${skipped ? ' skipped' : ''}`, text(s)))
    } else if (message || released) {
      // From the clients to the instance and back: one container over the lanes between, the arrows from lifeline to lifeline.
      const span = s.instance + 2
      const items: string[] = []
      if (message) items.push(arrow('request', s.what))
      const held = /^held (alone )?in the core/.test(s.answer)
      const killed = s.answer.startsWith('killed after the commit')
      if (released) items.push(laneEnd('admin', s.what))
      if (message && (held || killed)) items.push(laneEnd(killed ? 'crash' : 'held', s.answer))
      else if (s.answer) items.push(arrow(`answer${failed ? ' failed' : ''}`, s.answer))
      const lane = s.instance
      main.push(
        (row) =>
          `<div class="exchange" data-step="${s.index}" data-lane="${lane + 1}" style="--k:${span};grid-column:${clientCol}/${instCol(lane) + 1};grid-row:${row}">${items.join('')}</div>`,
      )
    } else main.push(at(instCol(s.instance), `admin${kind === 'crash' ? ' crash' : ''}`, text(s)))
    if (s.ledger) main.push(at(dbCol, 'ledger', `ledger ${e(s.ledger)}`))
    if (main.length) lines.push(main)
    return lines
  }

  const replay = replayOf(f)
  const script = timelineScriptName(f)
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Stage ${f.stage} history, seed ${f.seed}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
h2{margin-top:1.6em}
.scroll{overflow-x:auto}
.diagram{display:grid;column-gap:0;row-gap:.3em;min-width:${12 + lanes.length * 10}em}
.head{position:sticky;top:0;z-index:3;background:#f4f4f4;border:1px solid #ccc;border-radius:4px;padding:.3em .5em;margin:0 .4em .4em;text-align:center;font-weight:600;overflow-wrap:anywhere}
.lifeline{justify-self:center;width:0;border-left:2px dashed #bbb;z-index:1}
.band{z-index:0;border-radius:4px}
.band.failed{background:#fde8e8;outline:2px solid #e0a0a0}
.num{z-index:2;padding:.2em .4em;white-space:nowrap;color:#666;font-variant-numeric:tabular-nums;text-align:right}
.num.failed{color:#b00;font-weight:bold}
.exchange{z-index:2;display:flex;flex-direction:column;gap:.1em;min-width:0}
.msg{margin:0 calc(50% / var(--k));min-width:0}
.msg .label{padding:0 .5em;text-align:center;overflow-wrap:anywhere}
.msg.answer .label{color:#075}
.msg.answer.failed .label{color:#b00;font-weight:bold}
svg.arrow{display:block;width:100%;height:12px;overflow:visible}
svg.arrow line{stroke:#333;stroke-width:1.5}
svg.arrow.answer line{stroke:#075;stroke-dasharray:5 3}
svg.arrow.answer.failed line{stroke:#b00;stroke-width:2.5}
.lane-end{align-self:flex-end;width:calc(100% / var(--k));display:flex;justify-content:center}
.note,.lane-end>span{z-index:2;background:#fffbe6;border:1px solid #e0c060;border-radius:4px;padding:.2em .5em;margin:0 .4em;overflow-wrap:anywhere;min-width:0}
.note{justify-self:center;align-self:center;text-align:center}
.note.clock{justify-self:stretch;background:#fff3e0;border-color:#e0a040;color:#a60}
.note.ledger{font-family:ui-monospace,monospace;background:#eef6ff;border-color:#8ab}
.note.crash,.lane-end>span.crash{background:#fde8e8;border-color:#d66}
.lane-end>span.held{background:#eef;border-color:#99c}
.note.skipped{color:#777;border-style:dashed}
.verdict{z-index:2;border:2px solid #b00;border-radius:4px;background:#fff;padding:.3em 1em;margin:0 .4em}
.verdict p{margin:.2em 0}
code,pre{background:#f4f4f4;padding:.1em .3em;font-family:ui-monospace,monospace}
pre{padding:.6em;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
ol.start li{margin:.3em 0}
</style></head><body>
<h1>Stage ${f.stage}: the shortest failing history (seed ${f.seed})</h1>
<p>Read from top to bottom. Each request is an arrow from the clients to the instance it was sent to, its answer an arrow back; the core held, let go or failing and the crashes are notes on the instance's lane, the clock's moves a note across the instances and the database, the ledger's changes notes on the database's lane.${mismatch ? ` Step ${mismatch.step} is where the grade stopped.` : ''}</p>
<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>
<marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0L10,5L0,10z" fill="#333"/></marker>
<marker id="head-answer" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0L10,5L0,10z" fill="#075"/></marker>
<marker id="head-failed" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="#b00"/></marker>
</defs></svg>
<div class="scroll"><div class="diagram" style="grid-template-columns:3.5em repeat(${lanes.length},minmax(0,1fr));grid-template-rows:auto repeat(${Math.max(1, rows - 1)},auto)">
${[...heads, ...lifelines, ...body].join('\n')}
</div></div>
<details><summary>The same history as text</summary><pre>${e(timelineText(f).map(String).join('\n'))}</pre></details>
<h2>Replay it</h2>
<p>The grade's own run again: <code>${e(f.rerun)}</code></p>
<p>Or step by step on a server of your own, with curl (the grade's servers are gone):</p>
<ol class="start">
<li>From the course's folder, start the stage's server${n > 1 ? 's, each in a terminal of its own, in this order' : ' in a terminal of its own'}${replay.clockStart === undefined ? '' : ", its clock standing where the grade's stood when the history began"}:
${replay.start.map((c) => `<pre class="serve">${e(c)}</pre>`).join('\n')}${n > 1 ? '<p>The second and third with <code>ADMIN</code> set first to the admin token the first one printed.</p>' : ''}${f.stage >= 6 ? "<p><code>LAB_DATABASE_URL</code>: an empty PostgreSQL database of your own, the same for every server. The grade also moved that database's <code>now()</code> with its clock; here it stays the host's.</p>" : ''}</li>
<li>In another terminal, set <code>ADMIN</code> to the admin token the server printed (<code>adm_</code> and 32 hex digits), and run the script: <a class="script" download="${e(script)}" href="data:text/x-shellscript;charset=utf-8,${e(encodeURIComponent(replay.script))}">download ${e(script)}</a>, then
<pre class="run">ADMIN=adm_… sh ${e(script)}</pre>
or paste its lines below in order. It creates the history's two clients and their accounts, keeps their new API keys and account ids in shell variables (<code>$KEY_A</code>, <code>$ACC_A0</code>, …) that stand for the grade's in every request, and prints each answer under the one the grade got. Run it once per fresh server: the idempotency keys are the grade's.</li>
</ol>
<pre class="replay">${e(replay.script)}</pre>
</body></html>
`

  function text(s: EnglishStep): string {
    return `${e(s.what)}${s.answer ? `<br><span class="said">${e(s.answer)}</span>` : ''}`
  }
}

/** An arrow between the container's two lifelines, its label above it: a request points right, an answer left. */
function arrow(cls: string, label: string): string {
  const answer = cls.startsWith('answer')
  const head = cls.includes('failed') ? 'head-failed' : answer ? 'head-answer' : 'head'
  const [x1, x2] = answer ? ['100%', '0'] : ['0', '100%']
  return `<div class="msg ${cls}"><div class="label">${escapeHtml(label)}</div><svg class="arrow ${cls}" aria-hidden="true"><line x1="${x1}" y1="6" x2="${x2}" y2="6" marker-end="url(#${head})"/></svg></div>`
}

/** A note on the instance's lifeline, at the end of a container that starts at the clients. */
function laneEnd(cls: string, label: string): string {
  return `<div class="lane-end"><span class="${cls}">${escapeHtml(label)}</span></div>`
}

/** The clients' lane: the history's clients by label. */
function clientLaneName(run: HistoryRun): string {
  return run.parties?.length ? run.parties.map((p) => `client ${p.label}`).join(' · ') : 'clients'
}
