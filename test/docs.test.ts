// The docs that restate the checks (stage READMEs) or the point totals
// (docs/instructors.md) hold generated blocks: each must be what
// `npm run docs:tables` writes from grader/checks and course.json today.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { checksFor } from '#grader/checks/index.ts'
import { course } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { FAULTS, type IncidentKind, KIND_TABLE } from '../logs/faults.ts'
import { DAY_FILE } from '../logs/generator.ts'
import { generatedDocs } from '#scripts/docTables.ts'
import { maxScoreOfGrade } from '#grader/checks/index.ts'
import { checkText, stageText } from '#harness/i18n/packs.ts'

const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
const generated = (path: string) => {
  const doc = generatedDocs().find((d) => d.path === path)
  if (!doc) throw new Error(`${path} is not generated`)
  return doc
}

describe('generated doc blocks', () => {
  for (const doc of generatedDocs()) {
    it(`${doc.path} is up to date`, () => {
      const text = read(doc.path)
      expect(text, `${doc.path} differs from its generated blocks: run npm run docs:tables`).toBe(doc.render(text))
    })
  }

  it('a stage README lists every check of its stage, with its points, in the grader order', () => {
    for (const stage of course.stages) {
      const text = read(`stages/${stage.folder}/README.md`)
      const ids = [...text.matchAll(/^\| `([a-z0-9-]+)` \| (\d+) \|/gm)].map((m) => `${m[1]}:${m[2]}`)
      expect(ids, stage.folder).toEqual(checksFor(stage.number).map((c) => `${c.id}:${c.points}`))
    }
  })

  it('the render notices a stale table and a stale total', () => {
    const [readme, instructors] = [generated(`stages/${course.stages[1]!.folder}/README.md`), generated('docs/instructors.md')]
    const text = read(readme.path)
    const first = checksFor(1)[0]
    if (!first) throw new Error('stage 1 has no checks')
    const stale = text.replace(`| \`${first.id}\` | ${first.points} |`, `| \`${first.id}\` | ${first.points + 1} |`)
    expect(stale).not.toBe(text)
    expect(readme.render(stale)).toBe(text)
    const last = course.stages.length - 1
    const scores = read(instructors.path)
    const total = `stage ${last}    0/${maxScoreOfGrade(course.stages[last]!)}`
    expect(scores).toContain(total)
    expect(instructors.render(scores.replace(total, `stage ${last}    0/1`))).toBe(scores)
  })

  // One title, one wording: the ✗ line a learner reads names the check as the README's table does, in every language (issue 36).
  it.for(['zh-CN', 'ko'] as const)("%s: a README's check title or stage title other than the grader's fails, and the render puts the grader's back", (lang) => {
    const stage = course.stages[3]!
    const readme = generated(`stages/${stage.folder}/README.${lang}.md`)
    const text = read(readme.path)
    const check = checksFor(stage.number)[0]!
    const { title } = checkText(lang, check)
    const row = `| \`${check.id}\` | ${check.points} | ${title} |`
    expect(text).toContain(row)
    const reworded = text.replace(row, `| \`${check.id}\` | ${check.points} | ${title}（另一种说法） |`)
    expect(readme.render(reworded), "a reworded title is rendered back to the grader's").toBe(text)
    const heading = `· ${stageText(lang, stage).title}\n`
    expect(text).toContain(heading)
    expect(readme.render(text.replace(heading, '· 另一个标题\n'))).toBe(text)
  })

  it('a README without its block is refused, not silently skipped', () => {
    const readme = generatedDocs()[0]
    expect(() => readme?.render('# Stage 0 · no block here\n')).toThrow(/checks:begin/)
    expect(() => readme?.render('no heading here\n<!-- checks:begin --><!-- checks:end -->\n')).toThrow(/first heading/)
  })
})

describe('logs/README.md against logs/faults.ts and the committed day', () => {
  const readme = read('logs/README.md')

  it('the mix table lists every incident kind, in the table order, with its count of intents in the day', () => {
    const firsts = new Map<string, string>()
    for (const row of read(DAY_FILE).split('\n').filter(Boolean)) {
      const { intent, kind } = JSON.parse(row) as { intent: string; kind: string }
      if (!firsts.has(intent)) firsts.set(intent, kind)
    }
    const count = (kind: string) => [...firsts.values()].filter((k) => k === kind).length
    // shared-key intents come in pairs (two clients, one key string), and the README counts pairs.
    const stated = (kind: string) => (kind === 'shared-key' ? `${count(kind) / 2} pairs` : count(kind).toLocaleString('en-US'))
    const rows = [...readme.matchAll(/^\| `([a-z-]+)` \| ([\d,]+(?: pairs)?) \|/gm)].map((m) => `${m[1]} ${m[2]}`)
    expect(rows).toEqual(KIND_TABLE.map(({ kind }) => `${kind} ${stated(kind)}`))
  })

  it("every intent's first attempt in the day carries its kind's fault from the table", () => {
    const seen = new Set<string>()
    for (const row of read(DAY_FILE).split('\n').filter(Boolean)) {
      const { kind, fault, attempt } = JSON.parse(row) as { kind: IncidentKind; fault: string; attempt: number }
      if (attempt === 1) seen.add(`${kind} ${fault}`)
    }
    // insufficient-funds: the planner drops the 402 of only some of them.
    const expected = KIND_TABLE.flatMap(({ kind, firstFault }) =>
      kind === 'insufficient-funds' ? [`${kind} ${firstFault}`, `${kind} none`] : [`${kind} ${firstFault}`],
    )
    expect([...seen].sort()).toEqual(expected.sort())
  })

  it('the fault field names every fault', () => {
    const field = readme.split('\n').find((l) => l.startsWith('| `fault` |')) ?? ''
    for (const fault of FAULTS) expect(field, fault).toContain(`\`${fault}\``)
  })
})
