// The Chinese and Korean texts beside the English ones (README.zh-CN.md,
// stages/03-in-progress/README.ko.md, …) kept in step with them: text only,
// no server. A translation records under each heading the stamp of the
// English section it translates (harness/i18n/translations.ts); see
// CONTRIBUTING.md, "Translations".
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readGlossary } from '#harness/i18n/glossary.ts'
import { LANGUAGES } from '#harness/i18n/stamp.ts'
import { brokenFragments, freshnessDifferences, glossaryMisses, structureDifferences } from '#harness/i18n/translationChecks.ts'
import { languageLine, learnerTexts, loadPair, type Pair, pairOf, stampTranslation, translationPath } from '#harness/i18n/translations.ts'
import { repoRoot } from '#harness/paths.ts'

const pairs = learnerTexts().flatMap((english) => LANGUAGES.map((language) => loadPair(english, language)).filter((p): p is Pair => p !== undefined))
const coreTerms = readGlossary().filter((t) => t.core)

describe('translations', () => {
  it('cover the learner path (README, LESSONS, CONTRACT, every stage README) in every language, each file opening with its language line', () => {
    const missing = learnerTexts().flatMap((english) => LANGUAGES.map((l) => translationPath(english, l)).filter((t) => !pairs.some((p) => p.translated === t)))
    expect(missing, 'translations missing').toEqual([])
    const firstLine = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8').split('\n')[0]
    for (const english of learnerTexts()) expect(firstLine(english), english).toBe(languageLine(english, 'en'))
    for (const { english, translated, language } of pairs) expect(firstLine(translated), translated).toBe(languageLine(english, language))
  })

  describe.for(pairs)('$translated', (pair) => {
    it('translates the current English of every section (its stamps are current)', () => {
      expect(freshnessDifferences(pair).join('\n')).toBe('')
    })

    it('has the English sections and heading levels, and per section its code blocks, inline code, links and numbers', () => {
      expect(structureDifferences(pair).join('\n')).toBe('')
    })

    it('links only to anchors that exist', () => {
      expect(brokenFragments(pair).join('\n')).toBe('')
    })

    // Only the terms marked ★ in docs/glossary.md (25 of 34): on the drafts,
    // checking every term flagged 60 sections, all correct prose, because the
    // unmarked words have a second sense in the English ("check" the verb,
    // "replays the teller's incident", an account's "owner", "phase" in
    // general) or conjugate in Korean ("hold the core").
    it('uses the glossary for every core term its English uses', () => {
      expect(glossaryMisses(pair, coreTerms).join('\n')).toBe('')
    })
  })
})

// Each check above on an altered copy of one real pair, so that a check that
// can no longer fail does not pass unnoticed.
describe('the checks notice a translation that drifted', () => {
  const english = 'stages/02-fingerprint/README.md'
  const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
  const [en, zh] = [read(english), read(translationPath(english, 'zh-CN'))]
  const drifted = (englishText: string, translatedText: string) => pairOf(english, 'zh-CN', englishText, translatedText)

  it('an English section changed after its translation was stamped, until the section is stamped again', () => {
    const changed = en.replace(/^## The story\n/m, '## The story\n\nA sentence added.\n')
    expect(changed, 'the altered English').not.toBe(en)
    const stale = freshnessDifferences(drifted(changed, zh))
    expect(stale).toEqual([
      expect.stringMatching(
        /^stages\/02-fingerprint\/README\.zh-CN\.md § The story: the English changed since this translation \(stamp [0-9a-f]{8}, now [0-9a-f]{8}\); update the section, then npm run i18n:stamp -- stages\/02-fingerprint\/README\.zh-CN\.md --section 2$/,
      ),
    ])
    const restamped = stampTranslation(changed, zh, english, 'zh-CN', 2)
    expect(freshnessDifferences(drifted(changed, restamped))).toEqual([])
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
      expect(structureDifferences(drifted(en, zh.replaceAll(from, to))).join('\n'), from).toMatch(message)
    }
  })

  it('a link to the translation of another course text counts as the link to the English text', () => {
    const sibling = zh.replace('../../docs/guarantees.md#', '../../docs/guarantees.zh-CN.md#')
    expect(structureDifferences(drifted(en, sibling)).join('\n')).toMatch(/links differ/)
    const toLessons = '[LESSONS](../../LESSONS.md#capstone--the-day)'
    expect(structureDifferences(drifted(`${en}\n${toLessons}\n`, `${zh}\n${toLessons.replace('LESSONS.md', 'LESSONS.zh-CN.md')}\n`))).toEqual([])
  })

  it('a fragment link to an anchor that does not exist', () => {
    const broken = zh.replace('#the-model-and-its-histories', '#the-model')
    expect(brokenFragments(drifted(en, broken)).join('\n')).toMatch(/§ How it is graded: \.\.\/\.\.\/docs\/guarantees\.md#the-model has no anchor #the-model/)
  })

  it('a core term not in the glossary', () => {
    const offGlossary = zh.replaceAll('指纹', '摘要')
    expect(glossaryMisses(drifted(en, offGlossary), coreTerms).join('\n')).toMatch(
      /§ The story: the English says "fingerprint", the translation uses none of 指纹/,
    )
  })
})
