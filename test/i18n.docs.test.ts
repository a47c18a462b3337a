// The Chinese and Korean texts beside the English ones (README.zh-CN.md,
// stages/03-in-progress/README.ko.md, …) kept in step with them: text only,
// no server. A translation records under each heading the stamp of the
// English section it translates (scripts/i18n/translations.ts); a section
// behind its English is listed by npm run i18n:status, never failed on here,
// and what is compared with the English is compared only in sections stamped
// current (scripts/i18n/translationChecks.ts; CONTRIBUTING.md, "Translations").
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { pack } from '#harness/i18n/packs.ts'
import { LANGUAGES } from '#harness/i18n/stamp.ts'
import { repoRoot } from '#harness/paths.ts'
import { parseForbiddenForms, readForbiddenForms, readGlossary } from '#scripts/i18n/glossary.ts'
import {
  brokenFragments,
  forbiddenForms,
  forbiddenFormsInPack,
  glossaryMisses,
  type Reference,
  structureDifferences,
  TRANSLATION_CHECKS,
} from '#scripts/i18n/translationChecks.ts'
import { languageLine, learnerTexts, loadPair, type Pair, pairOf, stampTranslation, translationPath } from '#scripts/i18n/translations.ts'

const pairs = learnerTexts().flatMap((english) => LANGUAGES.map((language) => loadPair(english, language)).filter((p): p is Pair => p !== undefined))
const coreTerms = readGlossary().filter((t) => t.core)
const forbidden = readForbiddenForms()
const reference: Reference = { coreTerms, forbidden }

describe('translations', () => {
  it('each file of the learner path opens with its language line, linking the translations that exist', () => {
    // A translation not written yet is listed by npm run i18n:status, not failed on; the real ones are all there.
    expect(pairs.length).toBeGreaterThan(0)
    const firstLine = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8').split('\n')[0]
    for (const english of learnerTexts()) expect(firstLine(english), english).toBe(languageLine(english, 'en'))
    for (const { english, translated, language } of pairs) expect(firstLine(translated), translated).toBe(languageLine(english, language))
  })

  describe.for(pairs)('$translated', (pair) => {
    it.for(TRANSLATION_CHECKS)('$name', ({ differences }) => {
      expect(differences(pair, reference).join('\n')).toBe('')
    })
  })

  it.for(LANGUAGES)("the grader's %s pack uses none of the forms the glossary forbids", (language) => {
    expect(forbiddenFormsInPack(language, pack(language), forbidden).join('\n')).toBe('')
  })
})

// Each check above on an altered copy of one real pair, so that a check that
// can no longer fail does not pass unnoticed. A comparison with the English
// is made on a copy stamped current (`current`): the real section may be
// behind its English, which fails nothing.
describe('the checks notice a translation that drifted', () => {
  const english = 'stages/02-fingerprint/README.md'
  const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
  const [en, zh] = [read(english), read(translationPath(english, 'zh-CN'))]
  const drifted = (englishText: string, translatedText: string) => pairOf(english, 'zh-CN', englishText, translatedText)

  /** The pair with every section of the translation stamped current, as after npm run i18n:stamp -- --all: the comparisons with the English apply to each. */
  const current = (englishText: string, translatedText: string) => drifted(englishText, stampTranslation(englishText, translatedText, english, 'zh-CN', 'all'))

  it('an English section changed after its translation was stamped: no longer compared with the new English until it is stamped again', () => {
    const changed = en.replace(/^## The story\n/m, '## The story\n\nA sentence added, with `new code`, 7 and [a link](https://example.com).\n')
    expect(changed, 'the altered English').not.toBe(en)
    expect(structureDifferences(drifted(changed, zh))).toEqual([])
    expect(structureDifferences(current(changed, zh)).join('\n')).toMatch(/§ The story: inline code differs from the English: missing `new code`/)
    const restamped = stampTranslation(changed, zh, english, 'zh-CN', 2)
    expect(restamped.split('\n').filter((l, i) => l !== zh.split('\n')[i])).toHaveLength(1)
  })

  it('a changed command, inline code, link, number or heading level', () => {
    const cases: [string, string, RegExp][] = [
      ['npm run grade -- 2 --seed 42', 'npm run grade -- 2 --seed 24', /§ How to run: code block 1 differs/],
      [
        '`canonicalize(payload)`',
        '`canonicalise(payload)`',
        /§ What to change: inline code differs from the English: missing `canonicalize\(payload\)`; not in the English `canonicalise\(payload\)`/,
      ],
      ['../../docs/guarantees.md#the-model-and-its-histories', '../../docs/guarantees.md', /§ How it is graded: links differ/],
      ['₩300,000', '₩3,000', /§ The story: numbers of the English missing: 300,000/],
      ['### RFC 8785', '## RFC 8785', /§ RFC 8785 in brief: heading level 2, the English has 3/],
    ]
    for (const [from, to, message] of cases) {
      expect(zh, from).toContain(from)
      expect(structureDifferences(current(en, zh.replaceAll(from, to))).join('\n'), from).toMatch(message)
    }
  })

  it('a link to the translation of another course text counts as the link to the English text', () => {
    const sibling = zh.replace('../../docs/guarantees.md#', '../../docs/guarantees.zh-CN.md#')
    expect(structureDifferences(current(en, sibling)).join('\n')).toMatch(/links differ/)
    const toLessons = '[LESSONS](../../LESSONS.md#capstone--the-day)'
    expect(structureDifferences(current(`${en}\n${toLessons}\n`, `${en}\n${toLessons.replace('LESSONS.md', 'LESSONS.zh-CN.md')}\n`))).toEqual([])
    expect(structureDifferences(current(`${en}\n${toLessons}\n`, `${en}\n[LESSONS](../../LESSONS.ko.md#capstone--the-day)\n`)).join('\n')).toMatch(
      /links differ/,
    )
  })

  it('a fragment link to an anchor that does not exist', () => {
    const broken = zh.replace('#the-model-and-its-histories', '#the-model')
    expect(brokenFragments(drifted(en, broken)).join('\n')).toMatch(/§ How it is graded: \.\.\/\.\.\/docs\/guarantees\.md#the-model has no anchor #the-model/)
  })

  it('a translated comment in a shell or TypeScript block is prose; its command, a comment taken out and an English output are not', () => {
    const line = '--seed 42       # reproduce a run'
    expect(en, line).toContain(line)
    const translated = (to: string) => structureDifferences(current(en, en.replace(line, to))).join('\n')
    expect(translated(line)).toBe('')
    expect(translated('--seed 42  # 复现一次运行')).toBe('')
    expect(translated('--seed 42')).toMatch(/§ How to run: code block 1 differs/)
    expect(translated('--seed 24  # 复现一次运行')).toMatch(/§ How to run: code block 1 differs/)
    const output = '```\n✓ key-required\n```'
    expect(structureDifferences(current(`${en}\n${output}\n`, `${en}\n${output.replace('✓', '# ✓')}\n`)).join('\n')).toMatch(/code block \d+ differs/)
  })

  it('a core term not in the glossary', () => {
    const offGlossary = zh.replaceAll('指纹', '摘要')
    expect(glossaryMisses(current(en, offGlossary), coreTerms).join('\n')).toMatch(
      /§ The story: the English says "fingerprint", the translation uses none of 指纹/,
    )
  })
})

// The forbidden forms, planted in a copy of a real translation and of a real
// pack: the checks above must name each (nothing is planted in the files).
describe('the checks notice a form the glossary forbids', () => {
  const english = 'stages/03-in-progress/README.md'
  const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
  const [en, zh] = [read(english), read(translationPath(english, 'zh-CN'))]

  it('the glossary forbids, among others, 转动 in Chinese and 돈의 트랜잭션 in Korean', () => {
    const forms = (language: string) => forbidden.filter((f) => f.language === language).flatMap((f) => f.forbidden)
    expect(forms('zh-CN')).toEqual(expect.arrayContaining(['转动资金', '转动', '服务端', '应答', '作答']))
    expect(forms('ko')).toEqual(expect.arrayContaining(['돈의 트랜잭션', '클라이언트의 계좌']))
    expect(() => parseForbiddenForms('| Language | Forbidden | Use instead | Why |\n|---|---|---|---|\n| fr | x | y | z |\n')).toThrow(/not one of zh-CN, ko/)
  })

  it('转动资金 planted in a translated section, in prose or in a code comment', () => {
    expect(forbiddenForms(pairOf(english, 'zh-CN', en, zh), forbidden)).toEqual([])
    const planted = zh.replace(/^(## .*\n<!-- source: .*\n)/m, '$1\n让请求转动资金。\n')
    expect(planted).not.toBe(zh)
    const found = forbiddenForms(pairOf(english, 'zh-CN', en, planted), forbidden)
    expect(found.join('\n')).toMatch(/^stages\/03-in-progress\/README\.zh-CN\.md § The story: uses "转动资金", a form the glossary forbids in zh-CN/m)
    expect(found.join('\n')).toMatch(/§ The story: uses "转动", /)
    const inComment = zh.replace(/(--seed 1234 +# ).*/, '$1转动资金')
    expect(inComment).not.toBe(zh)
    expect(forbiddenForms(pairOf(english, 'zh-CN', en, inComment), forbidden).join('\n')).toMatch(/§ How it is graded: uses "转动资金"/)
  })

  it('转动, 服务端, 应答 and 돈의 트랜잭션 planted in a copy of a pack', () => {
    const zhPack = structuredClone(pack('zh-CN'))
    zhPack.checks['crash-after-commit']!.hint += ' 资金转动了。'
    zhPack.messages[Object.keys(zhPack.messages)[0]!]!.text += '（服务端应答）'
    const found = forbiddenFormsInPack('zh-CN', zhPack, forbidden).join('\n')
    expect(found).toMatch(/^i18n\/zh-CN\.json check crash-after-commit hint: uses "转动", a form the glossary forbids in zh-CN/m)
    expect(found).toMatch(/^i18n\/zh-CN\.json message [\w.]+: uses "服务端"/m)
    expect(found).toMatch(/^i18n\/zh-CN\.json message [\w.]+: uses "应答"/m)
    const koPack = structuredClone(pack('ko'))
    koPack.stages['3']!.hints[0] += ' 돈의 트랜잭션 안에서.'
    koPack.checks['auth-and-ownership']!.title = koPack.checks['auth-and-ownership']!.title.replace('다른 고객의 계좌', '다른 클라이언트의 계좌')
    const koFound = forbiddenFormsInPack('ko', koPack, forbidden).join('\n')
    expect(koFound).toMatch(/^i18n\/ko\.json stage 3 hint 1: uses "돈의 트랜잭션"/m)
    expect(koFound).toMatch(/^i18n\/ko\.json check auth-and-ownership title: uses "다른 클라이언트"/m)
    expect(koFound).toMatch(/^i18n\/ko\.json check auth-and-ownership title: uses "클라이언트의 계좌"/m)
    expect(
      forbiddenFormsInPack(
        'ko',
        koPack,
        forbidden.filter((f) => f.language === 'zh-CN'),
      ),
    ).toEqual([])
  })
})
