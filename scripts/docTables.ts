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
// - Its translations (README.zh-CN.md, README.ko.md): the same columns, the
//   title as the grader prints it in that language (i18n/<lang>.json), so that
//   a learner finds the ✗ line's title in the README's table; the line under
//   the table is the translator's. And in every language, the README's first
//   heading is "<Stage N> · <the stage's title>", the title as the grader prints it.
// - docs/instructors.md, between <!-- scores:begin --> and <!-- scores:end -->:
//   every "stage K  N/M" gets M = the most a stage-K grade can score
//   (maxScoreOfGrade: its own checks, as the grader counts them); a full score N = M stays full.
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { checksFor, checksOfGrade, maxScoreOfGrade } from '#grader/checks/index.ts'
import { skippedOnDatabase } from '#grader/engine/check.ts'
import { course, stageByNumber, type Stage } from '#harness/course.ts'
import type { Lang } from '#harness/i18n/language.ts'
import { checkText, stageText } from '#harness/i18n/packs.ts'
import { LANGUAGES } from '#harness/i18n/stamp.ts'
import { repoRoot } from '#harness/paths.ts'

export type GeneratedDoc = { path: string; render(text: string): string }

/** The generated columns' headings, in each language. */
const GENERATED_HEADERS: Record<Lang, string[]> = {
  en: ['check', 'points', 'what it checks'],
  'zh-CN': ['检查项', '分值', '检查什么'],
  ko: ['검사 항목', '배점', '검사 내용'],
}

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

function checksTable(stage: Stage, inner: string, path: string, lang: Lang): string {
  const lines = inner.split('\n').filter((l) => l.trim().startsWith('|'))
  if (lines.length < 2) throw new Error(`${path}: the checks block holds no table`)
  const header = cells(lines[0] as string)
  const generated = GENERATED_HEADERS[lang]
  const proseColumns = header.filter((h) => !generated.includes(h))
  // The README's own prose, by check id: it survives a renumbering or a new title.
  const prose = new Map<string, Map<string, string>>()
  for (const line of lines.slice(2)) {
    const values = cells(line)
    const id = (values[0] ?? '').replace(/`/g, '')
    prose.set(id, new Map(header.map((h, i) => [h, values[i] ?? ''])))
  }
  const checks = checksFor(stage.number)
  const body = checks.map((c) => {
    const title = checkText(lang, c).title.replace(/\|/g, '\\|')
    return row([`\`${c.id}\``, String(c.points), title, ...proseColumns.map((h) => prose.get(c.id)?.get(h) ?? '')])
  })
  const table = [row([...generated, ...proseColumns]), row([...generated, ...proseColumns].map(() => '---')).replace(/ /g, ''), ...body]
  // A translation's line under the table is its translator's: kept as it is.
  if (lang !== 'en')
    return [
      '',
      ...table,
      ...inner
        .slice(inner.indexOf(lines.at(-1)!) + lines.at(-1)!.length)
        .split('\n')
        .slice(1),
    ].join('\n')
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
  return ['', ...table, '', total, ''].join('\n')
}

function scoreLines(inner: string): string {
  return inner.replace(/(stage (\d+)\s+)(\d+)\/(\d+)/g, (_all, lead: string, stage: string, got: string, max: string) => {
    const most = maxScoreOfGrade(stageByNumber(Number(stage)))
    return `${lead}${got === max ? most : got}/${most}`
  })
}

/** The README's first heading, "# <Stage N> · <title>": the title as the grader prints it in `lang`, the words before it the translator's. */
function stageHeading(stage: Stage, text: string, path: string, lang: Lang): string {
  const heading = /^# (.+?) · .*$/m.exec(text)
  if (!heading) throw new Error(`${path}: no first heading "# <stage> · <title>"`)
  return text.replace(heading[0], `# ${heading[1]} · ${stageText(lang, stage).title}`)
}

export function generatedDocs(): GeneratedDoc[] {
  const readmes = course.stages.flatMap((stage) =>
    (['en', ...LANGUAGES] as const).map((lang) => {
      const path = `stages/${stage.folder}/README${lang === 'en' ? '' : `.${lang}`}.md`
      return {
        path,
        render: (text: string) => replaceBlock(stageHeading(stage, text, path, lang), 'checks', path, (inner) => checksTable(stage, inner, path, lang)),
      }
    }),
  )
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
