// A failing history's sequence diagram (grader/model/timeline.ts), opened in
// a real headless Chromium: one row per step, one lane per instance plus the
// database's, the arrow of each step in the lane of the instance it went to,
// the failing step marked with expected against got, the server's text shown
// as text, and nothing fetched.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { HistoryRun } from '#grader/model/runHistory.ts'
import { timelineHtml, timelineText } from '#grader/model/timeline.ts'
import { scratchDir } from './helpers/scratch.ts'
import { haveChromium, noChromium, openChromium } from './helpers/chromium.ts'

const RUN: HistoryRun = {
  steps: [
    { index: 1, instance: 0, key: 'k0', what: 'client A /transfers intent 0 k0', answer: '201 tr_1 balanceAfter 39000', ledger: 'A0 -1000, B0 +1000' },
    { index: 2, instance: 1, key: undefined, what: 'the core holds', answer: 'the core holds every call' },
    { index: 3, instance: undefined, key: undefined, what: "the clock moves to k0's lease-end", answer: '', clock: '+30000 ms' },
    {
      index: 4,
      instance: 2,
      key: 'k0',
      what: 'client A /TRANSFERS/ intent 0 k0',
      answer: '200 <script>alert(1)</script>',
      exchange: { request: { method: 'POST', url: 'http://localhost/TRANSFERS/', headers: { 'Idempotency-Key': 'k0' }, body: '{"memo":"<b>"}' }, ms: 1 },
    },
  ],
  mismatch: { step: 4, expected: 'the first answer replayed', got: '200 <script>alert(1)</script>', rule: 'replayMarker' },
}
const SHOWN = {
  run: RUN,
  stage: 6,
  seed: 42,
  instances: ['instance 1', 'instance 2 (clock −30 s)', 'instance 3 (clock +30 s)'],
  rerun: 'npm run grade -- 6 --seed 42 --only histories-6',
}

describe('a failing history as text', () => {
  it('prints one line per step, marks the failing one, and ends with expected against got and the course rule', () => {
    const lines = timelineText(SHOWN)
    expect(lines.slice(0, 4).map((l) => l.startsWith('✗'))).toEqual([false, false, false, true])
    expect(lines[0]).toContain('[instance 1]')
    expect(lines[2]).toContain('clock +30000 ms')
    expect(lines.slice(4).join('\n')).toMatch(
      /step 4 left what the contract allows \(course rule, beyond draft-07 §2\.6\):\n {2}expected: the first answer replayed\n {2}got: {6}200 <script>/,
    )
  })
})

describe('a failing history as a sequence diagram', () => {
  it.skipIf(!haveChromium)(`renders in Chromium with a lane per instance and the failing step marked${noChromium}`, async () => {
    const scratch = scratchDir('timeline')
    const file = join(scratch.path, 'history.html')
    writeFileSync(file, timelineHtml(SHOWN))
    const context = await openChromium(join(scratch.path, 'profile'))
    try {
      const page = context.pages()[0] ?? (await context.newPage())
      const requested: string[] = []
      page.on('request', (r) => requested.push(r.url()))
      await page.goto(pathToFileURL(file).href)
      expect(requested, 'the page fetches nothing but itself').toEqual([pathToFileURL(file).href])

      expect(await page.$$eval('th.lane-name', (ths) => ths.map((th) => th.textContent))).toEqual([...SHOWN.instances, 'database and ledger'])
      const rows = await page.$$eval('tr.step', (trs) =>
        trs.map((tr) => ({
          step: Number(tr.getAttribute('data-step')),
          failed: tr.classList.contains('failed'),
          // The lane (0-based, after the # and clock columns) holding the step's arrow.
          lane: [...tr.querySelectorAll('td.lane')].findIndex((td) => td.classList.contains('hit')),
          ledger: tr.querySelector('td.ledger')?.textContent,
          clock: tr.querySelector('td.clock')?.textContent,
          visible: tr.getBoundingClientRect().height > 0,
        })),
      )
      expect(rows.map((r) => r.step)).toEqual([1, 2, 3, 4])
      expect(rows.map((r) => r.failed)).toEqual([false, false, false, true])
      expect(rows.map((r) => r.lane)).toEqual([0, 1, -1, 2])
      expect(rows[0]!.ledger).toBe('A0 -1000, B0 +1000')
      expect(rows[2]!.clock).toBe('clock +30000 ms')
      expect(rows.every((r) => r.visible)).toBe(true)

      // The server's answer is text: no element, no script ran.
      expect(await page.locator('script').count()).toBe(0)
      expect(await page.locator('tr.failed .answer').textContent()).toBe('200 <script>alert(1)</script>')
      expect(await page.locator('.verdict').textContent()).toContain('course rule, beyond draft-07 §2.6')
      expect(await page.locator('body').textContent()).toContain(SHOWN.rerun)
      // Every request of the history as curl, in step order: here only step 4 sent one.
      expect(await page.$$eval('ol.curl li', (lis) => lis.map((li) => [li.getAttribute('data-step'), li.textContent]))).toEqual([
        ['4', `curl -sS -i -X POST 'http://localhost/TRANSFERS/' -H 'Idempotency-Key: k0' --data-raw '{"memo":"<b>"}'`],
      ])
      expect(await page.locator('ol.curl b').count()).toBe(0)
    } finally {
      await context.close()
      scratch.dispose()
    }
  })
})
