// The grader in the learner's language (issue 27): one grade in English,
// zh-CN and ko gives the same --json, and prints its failure, hint, verdict
// and next step in the language chosen, read from the pack. Every pack holds
// every stage, check and message of the course, translated from the English
// the course has now, with the same placeholders.
import { LAUNCHER } from '#harness/commands.ts'
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { course, stageByNumber } from '#harness/course.ts'
import { chooseLanguage, LANG_CHOICES, languageOfTag } from '#harness/i18n/language.ts'
import { t } from '#harness/i18n/messages.ts'
import { checkText, pack, packFile } from '#harness/i18n/packs.ts'
import { packProblems } from '#scripts/i18n/packStatus.ts'
import { LANGUAGES } from '#harness/i18n/stamp.ts'
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

describe('the packs', () => {
  it.for(LANGUAGES)('%s: every stage, check and message translated from the current English, with the same placeholders', (lang) => {
    expect(packFile(lang)).toBe(join(repoRoot, 'i18n', `${lang}.json`))
    expect(packProblems(lang, course, allChecks)).toEqual([])
  })

  it('a problem names the pack, the id and the English: a stage reworded, a check the course no longer has', () => {
    const [stage0, ...rest] = course.stages
    const reworded = { ...stage0!, title: `${stage0!.title}, reworded` }
    const problems = packProblems('ko', { ...course, stages: [reworded, ...rest] }, allChecks.slice(1))
    expect(problems).toEqual([
      `i18n/ko.json stage 0: out of date, the English is now ${JSON.stringify([reworded.title, reworded.summary, ...reworded.hints].join('\n'))}`,
      `i18n/ko.json check ${allChecks[0]!.id}: the course has no such check`,
    ])
  })

  it('an English that changed since its translation is shown in English, never the stale translation', () => {
    const [first] = allChecks
    const changed = { id: first!.id, title: `${first!.title} (reworded)`, hint: first!.hint }
    for (const lang of LANGUAGES) {
      expect(checkText(lang, first!)).toEqual({ title: pack(lang).checks[first!.id]!.title, hint: pack(lang).checks[first!.id]!.hint })
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
      expect(table).toContain(t(lang, 'progress.next', { number: 0, title: pack(lang).stages['0']!.title, command: 'npm run grade -- 0' }))
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

  it('--lang wins and is remembered in LAB_HOME; then a locale naming a translation (LC_ALL, LC_MESSAGES, LANG, the first set deciding); then the remembered choice; then English', () => {
    const before = process.env.LAB_HOME
    process.env.LAB_HOME = labHome('choose')
    try {
      // Nothing remembered yet.
      expect(chooseLanguage(undefined, { LANG: 'ko_KR.UTF-8' })).toBe('ko')
      expect(chooseLanguage(undefined, { LC_ALL: 'C', LANG: 'ko_KR.UTF-8' })).toBe('en')
      expect(chooseLanguage(undefined, { LC_MESSAGES: 'zh_CN.UTF-8', LANG: 'ko_KR.UTF-8' })).toBe('zh-CN')
      expect(chooseLanguage(undefined, { LANG: 'en_US.UTF-8' })).toBe('en')
      expect(chooseLanguage(undefined, {})).toBe('en')
      // --lang, in any of its spellings, wins over the locale, and is remembered as the course spells it.
      expect(chooseLanguage('zh', { LANG: 'ko_KR.UTF-8' })).toBe('zh-CN')
      // A locale that names a translation wins over the remembered choice: LANG is not ignored.
      expect(chooseLanguage(undefined, { LANG: 'ko_KR.UTF-8' })).toBe('ko')
      // One that names English, none or no course language leaves the remembered choice.
      for (const LANG of ['en_US.UTF-8', 'C.UTF-8', 'fr_FR.UTF-8']) expect(chooseLanguage(undefined, { LANG }), LANG).toBe('zh-CN')
      expect(chooseLanguage(undefined, {})).toBe('zh-CN')
      // An unsupported one is refused in one line, and changes nothing remembered.
      expect(() => chooseLanguage('fr', {})).toThrow(/^--lang fr: the grader speaks en, zh-CN, ko \(zh, zh-Hans and zh_CN\.UTF-8 also mean zh-CN\)$/)
      expect(() => chooseLanguage('zh-TW', {})).toThrow('--lang zh-TW: the grader speaks')
      expect(chooseLanguage(undefined, {})).toBe('zh-CN')
      expect(chooseLanguage('en-US', {})).toBe('en')
      expect(chooseLanguage(undefined, { LANG: 'en_GB.UTF-8' })).toBe('en')
    } finally {
      if (before === undefined) delete process.env.LAB_HOME
      else process.env.LAB_HOME = before
    }
  })

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
    const ko = pack('ko').stages['0']!
    const home = labHome('hint')
    const first = await hint(['0', '--lang', 'ko'], { LAB_HOME: home, LANG: 'C' })
    expect(first.stdout).toContain(t('ko', 'hint.title', { number: 0, title: ko.title, count: 1, total: stage0.hints.length }))
    expect(first.stdout).toContain(`  1. ${ko.hints[0]}`)
    const again = await hint(['0'], { LAB_HOME: home, LANG: 'en_US.UTF-8' })
    expect(again.stdout).toContain(`  2. ${ko.hints[1]}`)
    expect(again.stdout).toContain(t('ko', 'hint.next', { number: 0, following: 3 }))
    const fromLocale = await hint(['0'], { LAB_HOME: home, LANG: 'zh_CN.UTF-8' })
    expect(fromLocale.stdout).toContain(`  3. ${pack('zh-CN').stages['0']!.hints[2]}`)
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
      const check = pack(lang).checks[failed.id]!
      expect(out).toContain(`✗ ${check.title} [${failed.id}]`)
      expect(out).toContain(t(lang, 'failure.failed', { message: failed.message.split('\n')[0]! }).split('\n')[0])
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
      // No English heading left; the evidence (the check's message) stays as it came.
      for (const english of ['FAILED', '      hint: ', 'next: ']) expect(out).not.toContain(english)
      expect(out).toContain(failed.message.split('\n')[0])
    })
  }, 300_000)
})
