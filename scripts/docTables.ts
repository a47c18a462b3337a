// npm run docs:tables
//
// The check ids, their order, their points and their titles live in
// grader/checks/stageN.ts, and each stage's total in course.json. The docs
// that restate them hold generated blocks instead of copies, so a check added
// or re-weighted cannot leave a README behind; test/docs.test.ts fails when a
// block differs from what this script would write.
//
// - stages/NN-*/README.md, between <!-- checks:begin --> and <!-- checks:end -->:
//   the stage's check table. The id, points and "what it checks" (the title the
//   grader prints) columns are generated; any other column ("what it sends",
//   "what it expects") is prose written in the README and kept row by row, by id.
// - docs/instructors.md, between <!-- scores:begin --> and <!-- scores:end -->:
//   every "stage K  N/M" gets M = the most a stage-K grade can score
//   (maxScoreOfGrade: its own checks, as the grader counts them); a full score N = M stays full.
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { checksFor, checksOfGrade, maxScoreOfGrade } from '#grader/checks/index.ts'
import { skippedOnDatabase } from '#grader/engine/check.ts'
import { course, stageByNumber, type Stage } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'

export type GeneratedDoc = { path: string; render(text: string): string }

const GENERATED_HEADERS = ['check', 'points', 'what it checks']

/** Replaces what lies between `<!-- name:begin -->` and `<!-- name:end -->`. */
function replaceBlock(text: string, name: string, path: string, render: (inner: string) => string): string {
  const begin = `<!-- ${name}:begin -->`
  const end = `<!-- ${name}:end -->`
  const from = text.indexOf(begin)
  const to = text.indexOf(end)
  if (from < 0 || to < from) throw new Error(`${path}: no ${begin} … ${end} block`)
  const inner = text.slice(from + begin.length, to)
  return text.slice(0, from + begin.length) + render(inner) + text.slice(to)
}

/** The cells of a Markdown table row; a `\|` inside a cell is not a separator. */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((c) => c.trim())
}

const row = (values: string[]) => `| ${values.join(' | ')} |`

function checksTable(stage: Stage, inner: string, path: string): string {
  const lines = inner.split('\n').filter((l) => l.trim().startsWith('|'))
  if (lines.length < 2) throw new Error(`${path}: the checks block holds no table`)
  const header = cells(lines[0] as string)
  const proseColumns = header.filter((h) => !GENERATED_HEADERS.includes(h))
  // The README's own prose, by check id: it survives a renumbering or a new title.
  const prose = new Map<string, Map<string, string>>()
  for (const line of lines.slice(2)) {
    const values = cells(line)
    const id = (values[0] ?? '').replace(/`/g, '')
    prose.set(id, new Map(header.map((h, i) => [h, values[i] ?? ''])))
  }
  const checks = checksFor(stage.number)
  const body = checks.map((c) => {
    const title = c.title.replace(/\|/g, '\\|')
    return row([`\`${c.id}\``, String(c.points), title, ...proseColumns.map((h) => prose.get(c.id)?.get(h) ?? '')])
  })
  const most = maxScoreOfGrade(stage)
  const regression = checksOfGrade(stage).filter((c) => c.stage.number < stage.number)
  const leftOut = [
    ...(course.stages.some((s) => s.number < stage.number && checksFor(s.number).some((c) => c.regression === false)) ? ['their histories checks'] : []),
    ...(regression.some(({ check }) => skippedOnDatabase(check, stage)) ? ['those that need the SQLite file itself'] : []),
  ]
  const but = leftOut.length ? ` (all but ${leftOut.join(', and ')})` : ''
  // The score counts the stage's own checks only (stageScore); the regression checks are listed beside it.
  const alsoRuns = `: a stage ${stage.number} grade is out of ${most}. It also runs the earlier stages' checks as regression${but}: listed, not counted.`
  const total = `${checks.length} checks, ${stage.points} points${regression.length ? alsoRuns : '.'}`
  return [
    '',
    row([...GENERATED_HEADERS, ...proseColumns]),
    row([...GENERATED_HEADERS, ...proseColumns].map(() => '---')).replace(/ /g, ''),
    ...body,
    '',
    total,
    '',
  ].join('\n')
}

function scoreLines(inner: string): string {
  return inner.replace(/(stage (\d+)\s+)(\d+)\/(\d+)/g, (_all, lead: string, stage: string, got: string, max: string) => {
    const most = maxScoreOfGrade(stageByNumber(Number(stage)))
    return `${lead}${got === max ? most : got}/${most}`
  })
}

export function generatedDocs(): GeneratedDoc[] {
  const readmes = course.stages.map((stage) => {
    const path = `stages/${stage.folder}/README.md`
    return { path, render: (text: string) => replaceBlock(text, 'checks', path, (inner) => checksTable(stage, inner, path)) }
  })
  const instructors = 'docs/instructors.md'
  return [...readmes, { path: instructors, render: (text: string) => replaceBlock(text, 'scores', instructors, scoreLines) }]
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const doc of generatedDocs()) {
    const file = resolve(repoRoot, doc.path)
    const before = readFileSync(file, 'utf8')
    const after = doc.render(before)
    if (after !== before) writeFileSync(file, after)
    console.log(`${after === before ? 'unchanged' : 'rewritten'}  ${doc.path}`)
  }
}
