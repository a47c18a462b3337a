// A check's sentence as a message template and its values (harness/i18n/phrase.ts):
// the same English as a string would give, the pack's translation when it is
// current, nested sentences said in one language, and the English in a
// result document.
import { describe, expect, it } from 'vitest'
import { execFileSync } from 'node:child_process'
import '#grader/phrasebook.ts'
import { repoRoot } from '#harness/paths.ts'
import { pack } from '#harness/i18n/packs.ts'
import { listOf, Phrase, phrases, placeholdersOf, say, templates } from '#harness/i18n/phrase.ts'
import { span } from '#grader/checks/timeline.ts'
import { KEY_MALFORMATIONS } from '#grader/model/history.ts'
import { LANGUAGES, stampOf } from '#harness/i18n/stamp.ts'

const said = phrases('phraseTest', {
  moved: '{count} ledger row(s) for {what}',
  what: 'one transfer',
  json: 'PUT /admin/core {"crashAfterCommit": true} for {who}',
})

describe('Phrase', () => {
  it('says its English with its values filled in, in toString and toJSON alike', () => {
    const p = said('moved', { count: 2, what: said('what') })
    expect(String(p)).toBe('2 ledger row(s) for one transfer')
    expect(JSON.stringify({ message: p })).toBe('{"message":"2 ledger row(s) for one transfer"}')
    expect(say('zh-CN', 'evidence stays as it is')).toBe('evidence stays as it is')
  })

  it('a value holding braces is evidence, not a placeholder: it is printed as it came', () => {
    expect(String(said('moved', { count: 1, what: '{what}' }))).toBe('1 ledger row(s) for {what}')
  })

  it('braces around anything but a word are text: a JSON object in a template is no placeholder', () => {
    expect(String(said('json', { who: 'stage 3' }))).toBe('PUT /admin/core {"crashAfterCommit": true} for stage 3')
    expect(placeholdersOf('PUT /admin/core {"crashAfterCommit": true} for {who}')).toEqual(['who'])
  })

  it('mapEvidence changes the evidence, in nested phrases too, and never the words', () => {
    const p = said('moved', { count: 1, what: new Phrase('phraseTest.x', 'in {path}', { path: '/tmp/ws/stages/x.ts' }) })
    expect(String(p.mapEvidence((s) => s.replace('/tmp/ws/', '')))).toBe('1 ledger row(s) for in stages/x.ts')
  })

  it('a template id registered twice is a grader bug', () => {
    expect(() => phrases('phraseTest', { moved: 'again' })).toThrow(/phraseTest.moved is registered twice/)
  })

  it('every check sentence the pack translates is said in that language, its values in place', () => {
    for (const lang of LANGUAGES) {
      const translated = [...templates()].filter(
        ([id, english]) => pack(lang).messages[id]?.source === stampOf(english) && pack(lang).messages[id]!.text !== english,
      )
      expect(translated.length, `${lang}: no check sentence translated`).toBeGreaterThan(0)
      const [id, english] = translated.find(([, e]) => placeholdersOf(e).length > 0) ?? translated[0]!
      const values = Object.fromEntries(placeholdersOf(english).map((name) => [name, `<${name}>`]))
      const p = new Phrase(id, english, values)
      expect(p.in(lang)).toBe(pack(lang).messages[id]!.text.replace(/\{(\w+)\}/g, '<$1>'))
      expect(p.in(lang)).not.toBe(String(p))
    }
  })

  it('a span of the clock names its units in the language, and keeps the English as it was', () => {
    expect([500, 90_000, 3_600_000, 90_061_000].map((ms) => say('en', span(ms)))).toEqual([
      '500 ms',
      '90,000 ms (1 min 30 s)',
      '3,600,000 ms (1 h)',
      '90,061,000 ms (1 d 1 h)',
    ])
    expect(say('ko', span(90_000))).toBe('90,000 ms(1분 30초)')
    expect(say('zh-CN', span(90_061_000))).toBe('90,061,000 ms (1 天 1 小时)')
  })

  it("a quoted key's malformation (stage 1's key-format, the histories) is said in the language, not left in English inside a translated sentence", () => {
    for (const { what } of Object.values(KEY_MALFORMATIONS))
      for (const lang of LANGUAGES) expect(say(lang, what), `${lang}: ${String(what)}`).not.toMatch(/\b(with|without|after|other than)\b/)
    expect(say('ko', KEY_MALFORMATIONS.parameter.what)).toBe('뒤에 파라미터(;v=1)가 붙은')
  })

  it('a list joined with "and" is joined as each language joins one', () => {
    const copies = listOf(['3', '4'], 'and')
    expect(say('en', copies)).toBe('3 and 4')
    expect(say('zh-CN', copies)).toBe('3 和 4')
    expect(say('ko', copies)).toBe('3 및 4')
  })

  it('a translation behind its English is not said: the English is', () => {
    const p = new Phrase('phraseTest.moved', '{count} ledger row(s) for {what}', { count: 1, what: 'x' })
    for (const lang of LANGUAGES) expect(p.in(lang)).toBe(String(p))
  })

  it('the phrasebook reaches every file that registers templates, so that i18n:status lists them all', () => {
    const files = execFileSync('git', ['grep', '-l', '-E', "phrases\\('[A-Za-z0-9]+'", '--', 'grader', 'harness', 'replay', 'bench'], {
      cwd: repoRoot,
      encoding: 'utf8',
    })
    const scopes = new Set(
      [...files.matchAll(/\S+/g)].flatMap((f) =>
        [
          ...execFileSync('git', ['grep', '-h', '-o', '-E', "phrases\\('[A-Za-z0-9]+'", '--', f[0]], { cwd: repoRoot, encoding: 'utf8' }).matchAll(/'(\w+)'/g),
        ].map((m) => m[1]!),
      ),
    )
    expect(scopes.size).toBeGreaterThan(2)
    const registered = new Set([...templates().keys()].map((id) => id.split('.')[0]))
    expect(
      [...scopes].filter((scope) => !registered.has(scope)),
      'scopes no module of grader/phrasebook.ts loads',
    ).toEqual([])
  })
})
