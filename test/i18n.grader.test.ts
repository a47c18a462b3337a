// The grader in the learner's language (issue 27): one grade in English,
// zh-CN and ko gives the same --json, and prints its failure, hint, verdict
// and next step in the language chosen, read from the pack. A pack item
// translates a stage, check or message of the course, with the same
// placeholders; one missing or behind its English is shown in English, and
// listed by npm run i18n:status, never failed on.
import { LAUNCHER } from '#harness/commands.ts'
import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { course, stageByNumber } from '#harness/course.ts'
import { chooseLanguage, LANG_CHOICES, languageOfTag, rememberLangFlag } from '#harness/i18n/language.ts'
import { MESSAGES, type MessageId, t } from '#harness/i18n/messages.ts'
import { say, templates } from '#harness/i18n/phrase.ts'
import { refusal } from '#grader/cli/usageErrors.ts'
import { checkSource, checkText, messageText, type Pack, pack, packFile, stageSource, stageText } from '#harness/i18n/packs.ts'
import { packStatus } from '#scripts/i18n/packStatus.ts'
import { LANGUAGES, stampOf } from '#harness/i18n/stamp.ts'
import { repoRoot } from '#harness/paths.ts'
import { checksFor } from '#grader/checks/index.ts'
import type { GradeResult } from '#grader/grade.ts'
import { displayWidth } from '#grader/output/displayWidth.ts'
import { renderProgress } from '#grader/output/progress.ts'
import { startGradeCli } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'
import { stable } from './helpers/stableResult.ts'

const scratch = scratchDir('i18n-grader')
afterAll(() => scratch.disposeExpectingNoneLeft('processes left running by the graded starters'))

/** A folder of its own for a run's .lab/ state (the language it remembers). */
function labHome(label: string): string {
  const dir = join(scratch.path, 'home', label)
  mkdirSync(dir, { recursive: true })
  return dir
}

const allChecks = course.stages.flatMap((s) => checksFor(s.number))

/** A copy of `lang`'s pack with every item stamped current, whatever the real pack's state: what the tests below alter. */
function currentPack(lang: (typeof LANGUAGES)[number]): Pack {
  const copy = structuredClone(pack(lang))
  for (const stage of course.stages) if (copy.stages[stage.number]) copy.stages[stage.number]!.source = stampOf(stageSource(stage))
  for (const check of allChecks) if (copy.checks[check.id]) copy.checks[check.id]!.source = stampOf(checkSource(check))
  for (const [id, english] of templates()) if (copy.messages[id]) copy.messages[id]!.source = stampOf(english)
  return copy
}

/** A check whose translation in `lang` is current in the real pack (one English edit leaves the others so). */
const currentCheck = (lang: (typeof LANGUAGES)[number]) => allChecks.find((c) => pack(lang).checks[c.id]?.source === stampOf(checkSource(c)))

describe('the packs', () => {
  it.for(LANGUAGES)('%s: nothing broken (every current stage with its hints, every current message with its placeholders, no id the course lacks)', (lang) => {
    expect(packFile(lang)).toBe(join(repoRoot, 'i18n', `${lang}.json`))
    // An item missing or behind its English is listed by npm run i18n:status, not failed on: the grader shows the English for it.
    expect(packStatus(lang, pack(lang), { stages: course.stages, checks: allChecks }).broken).toEqual([])
  })

  it('a stage reworded is to translate, naming the English; a check the course no longer has, or a current message with other placeholders, is broken', () => {
    const ko = currentPack('ko')
    expect(packStatus('ko', ko, { stages: course.stages, checks: allChecks })).toMatchObject({ todo: [], broken: [] })
    const [stage0, ...rest] = course.stages
    const reworded = { ...stage0!, title: `${stage0!.title}, reworded` }
    const found = packStatus('ko', ko, { stages: [reworded, ...rest], checks: allChecks.slice(1) })
    expect(found.todo).toEqual([{ kind: 'stage', id: '0', state: 'out of date', english: [reworded.title, reworded.summary, ...reworded.hints].join('\n') }])
    expect(found.broken).toEqual([`i18n/ko.json check ${allChecks[0]!.id}: the course has no such check; remove it from the pack`])
    ko.messages['hint.next']!.text = ko.messages['hint.next']!.text.replace('{following}', '{next}')
    ko.stages['1']!.hints.pop()
    delete ko.checks[allChecks[1]!.id]
    const edited = packStatus('ko', ko, { stages: course.stages, checks: allChecks })
    expect(edited.broken).toEqual([
      `i18n/ko.json stage 1: ${stageByNumber(1).hints.length - 1} hints for the English's ${stageByNumber(1).hints.length}`,
      'i18n/ko.json message hint.next: placeholders {next} {number}, the English has {following} {number}',
    ])
    expect(edited.todo).toEqual([{ kind: 'check', id: allChecks[1]!.id, state: 'missing', english: `${allChecks[1]!.title}\n${allChecks[1]!.hint}` }])
  })

  it('an English that changed since its translation is shown in English, never the stale translation', () => {
    for (const lang of LANGUAGES) {
      const check = currentCheck(lang)
      expect(check, `${lang}: a check translated and current`).toBeDefined()
      const changed = { id: check!.id, title: `${check!.title} (reworded)`, hint: check!.hint }
      expect(checkText(lang, check!)).toEqual({ title: pack(lang).checks[check!.id]!.title, hint: pack(lang).checks[check!.id]!.hint })
      expect(checkText(lang, changed)).toEqual({ title: changed.title, hint: changed.hint })
    }
  })

  it('the progress table is in the language, its titles padded by terminal columns', () => {
    const progress = course.stages.map((s) => ({
      stage: s.number,
      slug: s.slug,
      title: s.title,
      state: 'not started' as const,
      score: 0,
      maxScore: s.points,
      regressionFailed: [],
    }))
    for (const lang of LANGUAGES) {
      const table = renderProgress(progress, { kind: 'starter' }, lang)
      expect(table).toContain(t(lang, 'progress.heading'))
      expect(table).toContain(t(lang, 'progress.next', { number: 0, title: stageText(lang, stageByNumber(0)).title, command: 'npm run grade -- 0' }))
      // Every row's score ends at the same terminal column.
      const ends = table
        .split('\n')
        .filter((line) => line.startsWith('  · '))
        .map((row) => displayWidth(/^.* \d+\/\d+ /.exec(row)![0]))
      expect(ends.length).toBe(course.stages.length)
      expect(new Set(ends).size, table).toBe(1)
    }
  })
})

describe('choosing the language', () => {
  it('a BCP 47 tag or a POSIX locale names en, zh-CN or ko, or none of the course languages', () => {
    const named = {
      'zh-CN': ['zh', 'zh-cn', 'zh-CN', 'zh_CN', 'zh_CN.UTF-8', 'zh-Hans', 'zh-Hans-CN', 'zh_SG.UTF-8'],
      ko: ['ko', 'ko_KR', 'ko-KR', 'ko_KR.UTF-8', 'KO'],
      en: ['en', 'en_US.UTF-8', 'en-GB', 'EN'],
    }
    for (const [lang, tags] of Object.entries(named)) for (const tag of tags) expect(languageOfTag(tag), tag).toBe(lang)
    for (const other of ['C', 'C.UTF-8', 'POSIX', '', 'zh_TW.UTF-8', 'zh-Hant', 'zh-HK', 'fr_FR@euro', 'klingon!'])
      expect(languageOfTag(other), other).toBeUndefined()
  })

  it('--lang wins, and is remembered in LAB_HOME once the command accepts its command line; then a locale naming a translation (LC_ALL, LC_MESSAGES, LANG, the first set deciding); then the remembered choice; then English', () => {
    const before = process.env.LAB_HOME
    process.env.LAB_HOME = labHome('choose')
    try {
      // Nothing remembered yet.
      expect(chooseLanguage(undefined, { LANG: 'ko_KR.UTF-8' })).toBe('ko')
      expect(chooseLanguage(undefined, { LC_ALL: 'C', LANG: 'ko_KR.UTF-8' })).toBe('en')
      expect(chooseLanguage(undefined, { LC_MESSAGES: 'zh_CN.UTF-8', LANG: 'ko_KR.UTF-8' })).toBe('zh-CN')
      expect(chooseLanguage(undefined, { LANG: 'en_US.UTF-8' })).toBe('en')
      expect(chooseLanguage(undefined, {})).toBe('en')
      // --lang, in any of its spellings, wins over the locale; choosing it alone remembers nothing.
      expect(chooseLanguage('zh', { LANG: 'ko_KR.UTF-8' })).toBe('zh-CN')
      expect(chooseLanguage(undefined, {})).toBe('en')
      // The command accepted its command line: --lang is remembered as the course spells it.
      rememberLangFlag('zh', 'zh-CN')
      rememberLangFlag(undefined, 'ko')
      // A locale that names a translation wins over the remembered choice: LANG is not ignored.
      expect(chooseLanguage(undefined, { LANG: 'ko_KR.UTF-8' })).toBe('ko')
      // One that names English, none or no course language leaves the remembered choice.
      for (const LANG of ['en_US.UTF-8', 'C.UTF-8', 'fr_FR.UTF-8']) expect(chooseLanguage(undefined, { LANG }), LANG).toBe('zh-CN')
      expect(chooseLanguage(undefined, {})).toBe('zh-CN')
      // An unsupported one is refused in one line, and changes nothing remembered.
      expect(() => chooseLanguage('fr', {})).toThrow(/^--lang fr: the grader speaks en, zh-CN, ko \(zh, zh-Hans and zh_CN\.UTF-8 also mean zh-CN\)$/)
      expect(() => chooseLanguage('zh-TW', {})).toThrow('--lang zh-TW: the grader speaks')
      expect(chooseLanguage(undefined, {})).toBe('zh-CN')
      rememberLangFlag('en-US', chooseLanguage('en-US', {}))
      expect(chooseLanguage(undefined, { LANG: 'en_GB.UTF-8' })).toBe('en')
    } finally {
      if (before === undefined) delete process.env.LAB_HOME
      else process.env.LAB_HOME = before
    }
  })

  it('a command line the grade refuses is told in its --lang, and leaves the remembered language as it was', async () => {
    const home = labHome('refused')
    const refused = await startGradeCli(['3', '--seed', 'x', '--lang', 'ko'], scratch.path, undefined, { LAB_HOME: home }).done
    expect(refused.code, refused.stdout + refused.stderr).toBe(2)
    expect(refused.stderr).toContain(say('ko', refusal('seedWhole')))
    expect(existsSync(join(home, 'language.json'))).toBe(false)
  }, 60_000)

  /** npm run hint, as a learner types it, with its own LAB_HOME and locale. */
  const hint = (args: string[], env: Record<string, string>) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
      execFile(
        process.execPath,
        [LAUNCHER, 'grader/cli/hint.ts', ...args],
        { cwd: repoRoot, env: { ...process.env, FORCE_COLOR: '0', LC_ALL: '', LC_MESSAGES: '', ...env } },
        (error, stdout, stderr) => done({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr }),
      ),
    )

  it('npm run hint: --lang ko, then remembered under an English LANG; LANG=zh_CN.UTF-8 over it; an unknown --lang is one line', async () => {
    const stage0 = stageByNumber(0)
    const ko = stageText('ko', stage0)
    const home = labHome('hint')
    const first = await hint(['0', '--lang', 'ko'], { LAB_HOME: home, LANG: 'C' })
    expect(first.stdout).toContain(t('ko', 'hint.title', { number: 0, title: ko.title, count: 1, total: stage0.hints.length }))
    expect(first.stdout).toContain(`  1. ${ko.hints[0]}`)
    const again = await hint(['0'], { LAB_HOME: home, LANG: 'en_US.UTF-8' })
    expect(again.stdout).toContain(`  2. ${ko.hints[1]}`)
    expect(again.stdout).toContain(t('ko', 'hint.next', { number: 0, following: 3 }))
    const fromLocale = await hint(['0'], { LAB_HOME: home, LANG: 'zh_CN.UTF-8' })
    expect(fromLocale.stdout).toContain(`  3. ${stageText('zh-CN', stage0).hints[2]}`)
    const unknown = await hint(['0', '--lang', 'fr'], { LAB_HOME: labHome('hint-unknown') })
    expect([unknown.code, unknown.stdout, unknown.stderr.trim().split('\n')]).toEqual([
      2,
      '',
      [expect.stringMatching(/^--lang fr: the grader speaks en, zh-CN, ko /)],
    ])
  }, 60_000)
})

describe('one grade in every language', () => {
  const SEED = '11'
  const json = (lang: string) => join(scratch.path, `starter-${lang}.json`)
  const read = (lang: string) => JSON.parse(readFileSync(json(lang), 'utf8')) as GradeResult

  it("stage 0's starter: the same --json in en, zh-CN and ko; failure, hint, verdict and next step in the language chosen", async () => {
    const runs = await Promise.all(
      LANG_CHOICES.map(
        (lang) =>
          startGradeCli(['0', '--seed', SEED, '--lang', lang, '--json', json(lang)], scratch.path, undefined, { LAB_HOME: labHome(`grade-${lang}`) }).done,
      ),
    )
    for (const run of runs) expect(run.code, run.stdout + run.stderr).toBe(1)
    const english = read('en')
    for (const lang of LANGUAGES) expect(stable(read(lang)), lang).toEqual(stable(english))
    // The JSON is the English: titles and hints as the checks write them.
    expect(english.checks.map((c) => c.title)).toEqual(checksFor(0).map((c) => c.title))

    const failed = english.checks.find((c) => !c.passed)!
    expect(failed.id).toBe('suspected-duplicates')
    const [en, ...translated] = runs.map((r) => r.stdout)
    expect(en).toContain(`FAILED  stage 0 score ${english.score}/${english.maxScore}`)
    expect(en).toContain(`hint: ${failed.hint}`)
    LANGUAGES.forEach((lang, i) => {
      const out = translated[i]!
      const check = checkText(lang, allChecks.find((c) => c.id === failed.id)!)
      expect(out).toContain(`✗ ${check.title} [${failed.id}]`)
      // The check's own sentence, a template of the check's (stage0.craftedCopies), said in the language, never in English.
      const [id] = [...templates()].find(([, english]) => english === failed.message) ?? []
      expect(id, `no template says ${failed.message}`).toBe('stage0.craftedCopies')
      expect(out).toContain(t(lang, 'failure.failed', { message: messageText(lang, id!, failed.message) }))
      expect(messageText(lang, id!, failed.message)).not.toBe(failed.message)
      expect(out).toContain(t(lang, 'failure.hint', { hint: check.hint }))
      const verdict = t(lang, 'summary.line', {
        verdict: t(lang, 'summary.failed'),
        number: 0,
        score: english.score,
        maxScore: english.maxScore,
        counts: '',
        seconds: '',
      })
      expect(out).toContain(verdict.split(' · ')[0])
      expect(out).toContain(t(lang, 'next.fix', { hintCommand: 'npm run hint -- 0', rerun: english.rerun }))
      // No English left where the pack translates it (current): headings, and the check's message.
      const headings = { 'summary.failed': 'FAILED', 'failure.hint': '      hint: ', 'next.fix': 'next: ' } as const
      for (const [id, english] of Object.entries(headings))
        if (messageText(lang, id, MESSAGES[id as MessageId]) !== MESSAGES[id as MessageId]) expect(out).not.toContain(english)
      expect(out).not.toContain(failed.message)
    })
  }, 300_000)
})
