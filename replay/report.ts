// The damage report in a terminal: one stage (incident kind × category), or
// every stage side by side (category, then incident kind × stage).
import chalk from 'chalk'
import { FAULT_TABLE, KINDS } from '../logs/faults.ts'
import { CATEGORIES, type DamageReport, type Figures } from './damage.ts'

/** ₩ with a short scale: ₩950, ₩12.5K, ₩3.4M, ₩1.2B. */
export function shortWon(n: number): string {
  const scale = [
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ] as const
  for (const [size, unit] of scale) if (n >= size) return `₩${(n / size).toFixed(1)}${unit}`
  return `₩${n}`
}

const SHORT: Record<(typeof CATEGORIES)[number]['id'], string> = {
  duplicateTransfers: 'duplicates',
  lostTransfers: 'lost',
  ignoredAmendments: 'ign. amend.',
  leakedResponses: 'leaked',
  spurious422s: 'spur. 422',
  stuckKeys: 'stuck 409',
  unreplayedRetries: 'unreplayed',
}

const cell = (f: Figures, c: (typeof CATEGORIES)[number]) => (f[c.id] === 0 ? '·' : `${f[c.id]} ${shortWon(f[c.amount])}`)

function table(rows: string[][], firstWidth: number, width: number): string {
  return rows.map((r) => r.map((v, i) => (i === 0 ? v.padEnd(firstWidth) : v.padStart(width))).join(' ')).join('\n')
}

export function printStageReport(r: DamageReport) {
  const head = ['incident kind', ...CATEGORIES.map((c) => SHORT[c.id])]
  const body = KINDS.map((k) => [k, ...CATEGORIES.map((c) => cell(r.byKind[k], c))])
  const total = ['total', ...CATEGORIES.map((c) => cell(r, c))]
  console.log(`\n${chalk.bold(`Damage on stage ${r.stage} (${r.slug}, ${r.source}: ${r.code} code)`)} ${chalk.dim('count and won amount; · is zero')}`)
  const lines = table([head, ...body, total], 20, 14).split('\n')
  console.log(chalk.dim(lines[0]))
  for (const l of lines.slice(1, -1)) console.log(l)
  console.log(chalk.bold(lines.at(-1)))
  console.log(chalk.dim('\nWhat each category counts:'))
  for (const c of CATEGORIES) console.log(`  ${c.title.padEnd(38)} ${chalk.dim(c.explain)}`)
  const examples = CATEGORIES.filter((c) => r.examples[c.id])
  if (examples.length) {
    console.log(chalk.dim('\nOne case of each (intent, kind, client, key):'))
    for (const c of examples) console.log(`  ${c.title}: ${r.examples[c.id]}`)
  }
  printFooter(r)
}

/** "12 responses dropped, 3 connections reset, …", in the fault table's order. */
function faultFigures(faults: DamageReport['faults']): string {
  return FAULT_TABLE.flatMap((row) => ('counter' in row ? [`${faults[row.counter]} ${row.label.replace('{restarts}', String(faults.restarts))}`] : [])).join(
    ', ',
  )
}

/** "3 instances behind a round-robin balancer (…); instance 1 SIGKILLed …", or '' for a single server. */
function instanceFigures({ instances }: DamageReport): string {
  if (instances.count === 1) return ''
  const killed = instances.killed.map((k) => `instance ${k.instance} SIGKILLed with ${k.heldRequests} request(s) inside, then restarted`)
  return `${instances.count} instances on one database behind a round-robin balancer (requests forwarded: ${instances.forwarded.join(' / ')}); ${killed.join('; ') || 'none killed'} · `
}

export function printFooter(r: DamageReport) {
  console.log(
    chalk.dim(
      `\n${r.day.file}: ${r.day.lines} lines, ${r.day.intents} intents · ${r.requests} requests sent, ${r.skippedRetries} retries not needed · ` +
        instanceFigures(r) +
        `faults: ${faultFigures(r.faults)} · ` +
        `${(r.replayMs / 1000).toFixed(1)} s, ${r.attemptsPerSecond} requests/s`,
    ),
  )
  for (const a of r.anomalies) console.log(chalk.red(`anomaly: ${a}`))
}

export function printAllStages(reports: DamageReport[]) {
  const head = ['', ...reports.map((r) => `stage ${r.stage}`)]
  console.log(`\n${chalk.bold('The whole course on one day')} ${chalk.dim('(count and won amount per stage; · is zero)')}`)
  // Whose code each column ran: an untouched starter's figures are not the learner's.
  console.log(chalk.dim(`code run: ${reports.map((r) => `stage ${r.stage} ${r.code}`).join(' · ')}`))
  for (const c of CATEGORIES) {
    const kinds = KINDS.filter((k) => reports.some((r) => r.byKind[k][c.id] > 0))
    const rows = [
      [c.title, ...head.slice(1)],
      ...kinds.map((k) => [`  ${k}`, ...reports.map((r) => cell(r.byKind[k], c))]),
      ['  total', ...reports.map((r) => cell(r, c))],
    ]
    const lines = table(rows, 38, 13).split('\n')
    console.log(`\n${chalk.bold(lines[0])}`)
    for (const l of lines.slice(1, -1)) console.log(l)
    console.log(chalk.bold(lines.at(-1)))
  }
  const ran = (r: DamageReport) =>
    `stage ${r.stage}: ${r.requests} requests in ${(r.replayMs / 1000).toFixed(1)} s${r.instances.count > 1 ? ` on ${r.instances.count} instances` : ''}`
  console.log(chalk.dim(`\n${reports.map(ran).join(' · ')}`))
  for (const r of reports) for (const a of r.anomalies) console.log(chalk.red(`stage ${r.stage} anomaly: ${a}`))
}
