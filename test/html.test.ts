// The HTML score report, opened in a real headless Chromium: the charts are
// checked as rendered (bar sizes against pass rates the test derives from the
// made-up class), learner-controlled text stays text, and nothing is fetched.
import { spawnSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import { ResultsStore } from '#grader/roster/store.ts'
import { CHECKS, CLASS, result } from './scores.fixture.ts'
import { scratchDir } from './helpers/scratch.ts'
import { CHROMIUM, haveChromium, noChromium, openChromium } from './helpers/chromium.ts'

if (!haveChromium) console.warn(`html report test: no Chromium at ${CHROMIUM} (install Debian's chromium, or set CHROMIUM_PATH); skipping`)

// Pass rates from the marks alone: per check, and per stage (learners who pass all of its checks).
const passes = (l: (typeof CLASS)[number], id: string) => !l.marks[id as keyof typeof l.marks]
const checkRate = (id: string) => CLASS.filter((l) => passes(l, id)).length / CLASS.length
const stageRate = (stage: number) => CLASS.filter((l) => CHECKS.filter((c) => c.stage === stage).every((c) => passes(l, c.id))).length / CLASS.length

describe('npm run scores -- --html', () => {
  it.skipIf(!haveChromium)(`draws pass rates per check and per stage as bars Chromium renders to scale${noChromium}`, async () => {
    const scratch = scratchDir('html')
    const store = new ResultsStore(join(scratch.path, 'grades.sqlite'))
    // Every stage graded on its own, as a roster does.
    CLASS.forEach((l, i) => {
      for (const stage of [0, 1, 2])
        store.record({
          learner: l.learner,
          gradedAt: new Date(Date.UTC(2026, 2, 14, 9, i * 3 + stage)).toISOString(),
          outcome: 'graded',
          reason: '',
          origin: 'test',
          result: result(100 + i, l.marks, stage),
        })
    })
    store.close()
    const report = join(scratch.path, 'report.html')
    const made = spawnSync('npm', ['run', '--silent', 'scores', '--', '--store', store.path, '--html', report], { cwd: repoRoot, encoding: 'utf8' })
    expect(made.status, made.stderr).toBe(0)

    const context = await openChromium(join(scratch.path, 'profile'))
    try {
      const page = context.pages()[0] ?? (await context.newPage())
      const requested: string[] = []
      page.on('request', (r) => requested.push(r.url()))
      await page.goto(pathToFileURL(report).href)
      expect(requested, 'the report fetches nothing but itself').toEqual([pathToFileURL(report).href])

      // Per check: each bar's rendered width over its track's is the check's pass rate.
      const rows = await page.$$eval('#check-chart g.check', (groups) =>
        groups.map((g) => ({
          check: g.getAttribute('data-check'),
          label: g.querySelector('.label')?.textContent,
          value: g.querySelector('.value')?.textContent,
          bar: g.querySelector('.bar')!.getBoundingClientRect().width,
          track: g.querySelector('.track')!.getBoundingClientRect().width,
        })),
      )
      expect(
        rows.map((r) => r.check),
        'one bar per check, in course order',
      ).toEqual([...CHECKS].map((c) => `${c.stage}:${c.id}`))
      for (const [i, c] of CHECKS.entries()) {
        const row = rows[i]!
        expect(row.label).toBe(c.id)
        expect(row.track).toBeGreaterThan(100)
        expect(row.bar / row.track, c.id).toBeCloseTo(checkRate(c.id), 2)
        expect(row.value).toContain(`${Math.round(checkRate(c.id) * 100)}%`)
      }
      expect(new Set(CHECKS.map((c) => checkRate(c.id))).size, 'the class gives the bars several lengths').toBeGreaterThan(2)

      // Per stage: bar heights are the stage pass rates on the same scale, bottoms aligned.
      const plotHeight = Number(await page.getAttribute('#stage-chart', 'data-plot-height'))
      const stages = await page.$$eval('#stage-chart g.stage', (groups) =>
        groups.map((g) => {
          const box = g.querySelector('.bar')!.getBoundingClientRect()
          return { stage: Number(g.getAttribute('data-stage')), label: g.querySelector('.label')?.textContent, height: box.height, bottom: box.bottom }
        }),
      )
      expect(stages.map((s) => s.stage)).toEqual([0, 1, 2])
      for (const s of stages) {
        expect(s.label).toBe(`stage ${s.stage}`)
        expect(s.height / plotHeight, `stage ${s.stage}`).toBeCloseTo(stageRate(s.stage), 2)
        expect(s.bottom).toBeCloseTo(stages[0]!.bottom, 1)
      }

      // A learner id is a folder name: markup in it is shown, not run.
      expect(await page.locator('img').count()).toBe(0)
      expect(await page.locator('#learners').textContent()).toContain('cy<img src=x>')

      mkdirSync(resolve(repoRoot, '.lab'), { recursive: true })
      await page.screenshot({ path: resolve(repoRoot, '.lab', 'scores-report.png'), fullPage: true })
    } finally {
      await context.close()
      scratch.dispose()
    }
  })
})
