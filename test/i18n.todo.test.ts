// The rule for translations (CONTRIBUTING.md, "Translations") on a small
// fixture, test/fixtures/i18n/guide.md and its zh-CN and ko translations,
// and on a made-up pack, never on the real texts: an English edit whose
// translations are left behind fails nothing npm test runs, and npm run
// i18n:status lists it with the command to run once it is translated; what
// is broken (a command changed in a current section, a heading missing, a
// forbidden form, a link to no anchor) still fails.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Pack } from '#harness/i18n/packs.ts'
import { type Language, stampOf } from '#harness/i18n/stamp.ts'
import { repoRoot } from '#harness/paths.ts'
import { readForbiddenForms, readGlossary } from '#scripts/i18n/glossary.ts'
import { packStatus } from '#scripts/i18n/packStatus.ts'
import { listTodo, renderTodo, statusExitCode, type Texts } from '#scripts/i18n/todo.ts'
import { type Reference, translationFailures } from '#scripts/i18n/translationChecks.ts'
import { pairOf, stampTranslation } from '#scripts/i18n/translations.ts'

const english = 'test/fixtures/i18n/guide.md'
const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
const fixture = { en: read(english), 'zh-CN': read('test/fixtures/i18n/guide.zh-CN.md'), ko: read('test/fixtures/i18n/guide.ko.md') }
const reference: Reference = { coreTerms: readGlossary().filter((t) => t.core), forbidden: readForbiddenForms() }

type Copy = { en: string } & Partial<Record<Language, string>>
/** The texts of a scratch copy of the fixture, as listTodo takes them. */
const texts = (copy: Copy): Texts[] => [{ english, englishText: copy.en, translations: { 'zh-CN': copy['zh-CN'], ko: copy.ko } }]
/** What npm test (test/i18n.docs.test.ts) fails on in the copy: every translation check, on each translation. */
const failures = (copy: Copy) =>
  (['zh-CN', 'ko'] as const).flatMap((l) => (copy[l] === undefined ? [] : translationFailures(pairOf(english, l, copy.en, copy[l]), reference)))
const todoOf = (copy: Copy) => listTodo(texts(copy), [])

describe('the fixture as committed', () => {
  it('is translated and current in both languages: nothing fails, nothing to translate', () => {
    expect(failures(fixture)).toEqual([])
    const listing = todoOf(fixture)
    expect(listing).toEqual({
      todo: [],
      broken: [],
      coverage: [
        { language: 'zh-CN', sections: { current: 3, total: 3 }, packItems: { current: 0, total: 0 } },
        { language: 'ko', sections: { current: 3, total: 3 }, packItems: { current: 0, total: 0 } },
      ],
    })
    expect(statusExitCode(listing, false)).toBe(0)
  })
})

describe('an English edit with its translations left behind', () => {
  const edited = { ...fixture, en: fixture.en.replace('The server stores', 'The server keeps, with the key,') }

  it('fails nothing npm test runs, and is listed in each language with the command to run once it is translated', () => {
    expect(edited.en).not.toBe(fixture.en)
    expect(failures(edited)).toEqual([])
    const listing = todoOf(edited)
    const [recorded, now] = [
      stampOf('## The fingerprint\n\nThe server stores the fingerprint of each body.\n'),
      stampOf(edited.en.slice(edited.en.indexOf('## The fingerprint'))),
    ]
    expect(fixture['zh-CN']).toContain(`<!-- source: ${recorded} -->`)
    expect(listing.todo).toEqual(
      (['zh-CN', 'ko'] as const).map((language) => ({
        language,
        what: `test/fixtures/i18n/guide.${language}.md § The fingerprint`,
        why: `out of date: the English changed since (stamp ${recorded}, now ${now})`,
        command: `npm run i18n:stamp -- test/fixtures/i18n/guide.${language}.md --section 3`,
      })),
    )
    expect(statusExitCode(listing, false)).toBe(1)
    expect(statusExitCode(listing, true)).toBe(0)
    expect(renderTodo(listing)).toBe(
      [
        "zh-CN: 1 to translate (1 in the learner path, 0 in the grader's pack)",
        `  test/fixtures/i18n/guide.zh-CN.md § The fingerprint: out of date: the English changed since (stamp ${recorded}, now ${now})`,
        '    then: npm run i18n:stamp -- test/fixtures/i18n/guide.zh-CN.md --section 3',
        "  current: 2/3 (66.7%) sections of the learner path, 0/0 (100.0%) items of the grader's pack",
        "ko: 1 to translate (1 in the learner path, 0 in the grader's pack)",
        `  test/fixtures/i18n/guide.ko.md § The fingerprint: out of date: the English changed since (stamp ${recorded}, now ${now})`,
        '    then: npm run i18n:stamp -- test/fixtures/i18n/guide.ko.md --section 3',
        "  current: 2/3 (66.7%) sections of the learner path, 0/0 (100.0%) items of the grader's pack",
        '',
        '2 things to translate: translate each, then run the command under it (CONTRIBUTING.md, "Translations"); until then the English is shown for a pack item, and the older translation for a section',
      ].join('\n'),
    )
  })

  it('once one language is updated and stamped, only the other is listed', () => {
    const updated = fixture['zh-CN'].replace('服务器保存', '服务器连同键一起保存')
    const stamped = { ...edited, 'zh-CN': stampTranslation(edited.en, updated, english, 'zh-CN', 3) }
    expect(failures(stamped)).toEqual([])
    expect(todoOf(stamped).todo.map((t) => t.what)).toEqual(['test/fixtures/i18n/guide.ko.md § The fingerprint'])
  })

  it('a section added to the English and copied into each translation unstamped, as CONTRIBUTING says: nothing fails, it is listed as not translated', () => {
    const section = '\n## Next\n\nRun `npm run grade -- 3` for 8 checks.\n'
    const copy = { en: fixture.en + section, 'zh-CN': fixture['zh-CN'] + section, ko: fixture.ko + section }
    expect(failures(copy)).toEqual([])
    expect(todoOf(copy).todo.map((t) => `${t.what}: ${t.why}`)).toEqual([
      'test/fixtures/i18n/guide.zh-CN.md § Next: not translated (no stamp)',
      'test/fixtures/i18n/guide.ko.md § Next: not translated (no stamp)',
    ])
    // Not copied: the headings no longer match, which npm test fails on, and i18n:status names as broken.
    const forgotten = { ...copy, ko: fixture.ko }
    expect(failures(forgotten)).toEqual([
      'test/fixtures/i18n/guide.ko.md: 3 headings, the English has 4; a translation keeps every heading, so its sections cannot be matched',
    ])
    expect(todoOf(forgotten).broken).toEqual(failures(forgotten))
  })

  it('a translation not written yet is listed whole, with the command that stamps every section', () => {
    const listing = todoOf({ en: fixture.en, 'zh-CN': fixture['zh-CN'] })
    expect(failures({ en: fixture.en, 'zh-CN': fixture['zh-CN'] })).toEqual([])
    expect(listing.todo).toEqual([
      {
        language: 'ko',
        what: 'test/fixtures/i18n/guide.ko.md',
        why: 'not translated (3 sections)',
        command: 'npm run i18n:stamp -- test/fixtures/i18n/guide.ko.md --all',
      },
    ])
    expect(listing.coverage[1]!.sections).toEqual({ current: 0, total: 3 })
  })
})

describe('what still fails npm test', () => {
  const command = 'npm run grade -- 2 --seed 42'
  const changedCommand = (text: string) => text.replace(command, 'npm run grade -- 2 --seed 24')

  it('a command changed in a translated section stamped current', () => {
    expect(fixture['zh-CN']).toContain(command)
    expect(failures({ en: fixture.en, 'zh-CN': changedCommand(fixture['zh-CN']) }).join('\n')).toMatch(
      /^test\/fixtures\/i18n\/guide\.zh-CN\.md § Run it: code block 1 differs from the English/,
    )
    // Also when another section of the file is behind its English: the check is per section.
    const edited = fixture.en.replace('The server stores', 'The server keeps')
    expect(failures({ en: edited, 'zh-CN': changedCommand(fixture['zh-CN']) }).join('\n')).toMatch(/§ Run it: code block 1 differs/)
  })

  it('not in a section behind its English: it translates the older English, whose command it may keep until it is updated', () => {
    const newCommand = changedCommand(fixture.en)
    expect(failures({ en: newCommand, 'zh-CN': fixture['zh-CN'] })).toEqual([])
    expect(
      todoOf({ en: newCommand, 'zh-CN': fixture['zh-CN'] })
        .todo.filter((t) => t.language === 'zh-CN')
        .map((t) => t.what),
    ).toEqual(['test/fixtures/i18n/guide.zh-CN.md § Run it'])
  })

  it('in any section, current or behind: a heading level changed, a forbidden form, a link to no anchor', () => {
    const behind = { en: fixture.en.replace('The server stores', 'The server keeps') }
    const cases: [string, string, RegExp][] = [
      ['## 指纹', '### 指纹', /§ The fingerprint: heading level 3, the English has 2/],
      ['服务器保存', '服务端保存', /§ The fingerprint: uses "服务端", a form the glossary forbids in zh-CN/],
      ['#forbidden-forms', '#forbidden', /§ Run it: \.\.\/\.\.\/\.\.\/docs\/glossary\.md#forbidden has no anchor #forbidden/],
    ]
    for (const [from, to, message] of cases) {
      expect(fixture['zh-CN'], from).toContain(from)
      const zh = fixture['zh-CN'].replace(from, to)
      expect(failures({ en: fixture.en, 'zh-CN': zh }).join('\n'), from).toMatch(message)
      expect(failures({ ...behind, 'zh-CN': zh }).join('\n'), from).toMatch(message)
    }
  })
})

describe("the grader's pack", () => {
  const course = {
    stages: [{ number: 0, title: 'Start', summary: 'Begin here.', hints: ['Read the README.', 'Run the grader.'] }],
    checks: [
      { id: 'key-required', title: 'A key is required', hint: 'Send one.' },
      { id: 'same-body', title: 'The same body', hint: 'Compare them.' },
    ],
    messages: { greeting: 'hello {name}', bye: 'bye' },
  }
  const current: Pack = {
    stages: {
      '0': {
        title: '开始',
        summary: '从这里开始。',
        hints: ['读 README。', '运行评分器。'],
        source: stampOf('Start\nBegin here.\nRead the README.\nRun the grader.'),
      },
    },
    checks: { 'key-required': { title: '需要键', hint: '发送一个。', source: stampOf('A key is required\nSend one.') } },
    messages: {
      greeting: { text: '你好 {name}', source: stampOf('hello {name}') },
      bye: { text: '再见', source: stampOf('bye') },
    },
  }

  it('an item missing or behind its English is to translate, with the stamp-pack command and the English; a broken one is listed apart', () => {
    const reworded = { ...course, messages: { ...course.messages, bye: 'goodbye' } }
    const status = packStatus('zh-CN', current, reworded)
    expect(status).toEqual({
      language: 'zh-CN',
      todo: [
        { kind: 'check', id: 'same-body', state: 'missing', english: 'The same body\nCompare them.' },
        { kind: 'message', id: 'bye', state: 'out of date', english: 'goodbye' },
      ],
      broken: [],
      items: 5,
    })
    const listing = listTodo([], [status], ['zh-CN'])
    expect(renderTodo(listing)).toBe(
      [
        "zh-CN: 2 to translate (0 in the learner path, 2 in the grader's pack)",
        '  i18n/zh-CN.json check same-body: missing',
        '    English: "The same body\\nCompare them."',
        '    then: npm run i18n:stamp-pack -- zh-CN check same-body',
        '  i18n/zh-CN.json message bye: out of date',
        '    English: "goodbye"',
        '    then: npm run i18n:stamp-pack -- zh-CN message bye',
        "  current: 0/0 (100.0%) sections of the learner path, 3/5 (60.0%) items of the grader's pack",
        '',
        '2 things to translate: translate each, then run the command under it (CONTRIBUTING.md, "Translations"); until then the English is shown for a pack item, and the older translation for a section',
      ].join('\n'),
    )
    const broken: Pack = structuredClone(current)
    broken.messages.greeting!.text = '你好 {nom}'
    broken.checks.gone = { title: '旧', hint: '旧', source: stampOf('x') }
    expect(packStatus('zh-CN', broken, reworded).broken).toEqual([
      'i18n/zh-CN.json message greeting: placeholders {nom}, the English has {name}',
      'i18n/zh-CN.json check gone: the course has no such check; remove it from the pack',
    ])
  })
})
