// A failing history as the grade shows it (grader/model/timeline.ts): text
// lines in the report; a sequence diagram (a lifeline for the clients, one per
// instance and one for the database, each request an arrow to its instance
// and its answer an arrow back, the admin steps notes on the lane they act
// on), opened in a real headless Chromium; and a replay script
// (timelineReplay.ts) that recreates the history's clients and sends its
// requests again on a server of one's own, the grade's keys and ids replaced
// by shell variables, no Unix socket of the grade's left in it.
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import type { HistoryRun, Step } from '#grader/model/runHistory.ts'
import { instanceLabel, labelAtPeriods, timelineHtml, timelineScript, timelineScriptName, timelineText } from '#grader/model/timeline.ts'
import { say } from '#harness/i18n/phrase.ts'
import { replayOf, timesOf } from '#grader/model/timelineReplay.ts'
import { A, B, recordedPost, sendStep } from './helpers/historyParties.ts'
import { scratchDir } from './helpers/scratch.ts'
import { haveChromium, noChromium, openChromium } from './helpers/chromium.ts'

const T0 = 1_767_225_600_000
const SOCKET = '/tmp/idem-lab-grade-x/bank-1.sock'
const K0 = '0b7c1a52-5b7e-4c1e-9a55-0f6f2a1d3e01'
const K1 = '9d1e2f33-4a5b-4c6d-8e7f-001122334455'

const post = (path: string, who: typeof A, key: string, body: string, extra: Record<string, string> = {}) => recordedPost(SOCKET, path, who, key, body, extra)
const TRANSFER = JSON.stringify({ from: A.accounts[0], to: B.accounts[0], amount: 500, memo: `say "hi", it's me` })
const A_PAYS = "(A pays ₩500 to the other client's)"

/** Stage 6, three instances: every kind of step a history takes, and a failing one whose answer is markup. */
const RUN: HistoryRun = {
  parties: [A, B],
  steps: [
    {
      index: 1,
      instance: 0,
      key: 'k0',
      what: `client A /transfers intent 0 ${A_PAYS} k0`,
      answer: '201 tr_1 balanceAfter 39500',
      ledger: 'A0 -500, B0 +500',
      exchange: post('/transfers', A, K0, TRANSFER),
      op: sendStep(0, 0),
      at: T0,
    },
    { index: 2, instance: 0, key: undefined, what: 'the core holds', answer: 'the core holds every call', op: { op: 'hold', instance: 0 }, at: T0 },
    {
      index: 3,
      instance: 0,
      key: 'k1',
      what: `client A /transfers intent 0 ${A_PAYS} k1`,
      answer: 'held in the core',
      exchange: post('/transfers', A, K1, TRANSFER),
      op: sendStep(0, 1),
      at: T0,
    },
    {
      index: 4,
      instance: undefined,
      key: undefined,
      what: "the clock moves to k1's lease-end",
      answer: '',
      clock: "+30000 ms (k1's lease-end)",
      op: { op: 'clock', to: 'lease-end', key: 1 },
      at: T0 + 30_000,
    },
    {
      index: 5,
      instance: 1,
      key: 'k0',
      what: 'client A /deposits intent 1 (A deposits ₩700 to own account) k0, its core call held alone',
      answer: 'held alone in the core',
      exchange: post('/deposits', A, K0, JSON.stringify({ to: A.accounts[1], amount: 700 })),
      op: sendStep(1, 0, { intent: 1, holdAlone: true }),
      at: T0 + 30_000,
    },
    {
      index: 6,
      instance: 1,
      key: 'k0',
      what: "the core lets k0's held request fail (503): step 5's request",
      answer: 'k0: 503 core-unavailable',
      op: { op: 'let-go', key: 0, fails: true },
      at: T0 + 30_000,
    },
    {
      index: 7,
      instance: 0,
      key: undefined,
      what: 'the core releases',
      answer: 'k1: 201 tr_2 balanceAfter 39000',
      ledger: 'A0 -500, B0 +500',
      op: { op: 'release', instance: 0 },
      at: T0 + 30_000,
    },
    {
      index: 8,
      instance: 2,
      key: undefined,
      what: 'the core will fail once',
      answer: '(skipped: the core is held or already failing)',
      op: { op: 'core-fails', instance: 2 },
      at: T0 + 30_000,
    },
    { index: 9, instance: 2, key: undefined, what: 'SIGKILL and restart', answer: 'SIGKILL, restarted', op: { op: 'crash', instance: 2 }, at: T0 + 30_000 },
    {
      index: 10,
      instance: 0,
      key: 'k1',
      what: 'client B /deposits intent 1 (B deposits ₩100 to own account) k1, crash after the commit',
      answer: 'killed after the commit (201), answer lost; restarted',
      ledger: 'B1 +100',
      exchange: post('/deposits', B, K1, JSON.stringify({ to: B.accounts[1], amount: 100 })),
      op: sendStep(0, 1, { client: 1, intent: 1, crashAfterCommit: true }),
      at: T0 + 30_000,
    },
    {
      index: 11,
      instance: 2,
      key: 'k0',
      what: `client A /TRANSFERS/ intent 0 ${A_PAYS} k0, body re-serialized + X-Request-Id: req-7f3a`,
      answer: '200 <script>alert(1)</script>',
      // A re-serialized body: members shuffled, whitespace, a number respelled, and an account id spelled with \u escapes.
      exchange: post('/TRANSFERS/', A, K0, `{ "amount" : 5e2,\n "to":"\\u0061cc_grade_b0", "from" : "acc_grade_a0", "memo":"say \\"hi\\", it's me"}`, {
        'X-Request-Id': 'req-7f3a',
      }),
      op: sendStep(2, 0, { spelling: 1, change: 'reserialized', extraHeaders: ['X-Request-Id'] }),
      at: T0 + 30_000,
    },
  ],
  mismatch: {
    step: 11,
    expected: 'the first answer replayed: 201 tr_1, marked Idempotent-Replayed',
    got: '200 <script>alert(1)</script>',
    rule: 'replayMarker',
  },
}
const SHOWN = {
  run: RUN,
  stage: 6,
  seed: 42,
  instances: [instanceLabel(6, 1, 0), instanceLabel(6, 2, -30_000), instanceLabel(6, 3, 30_000)],
  rerun: 'npm run grade -- 6 --seed 42 --only histories-6',
}
const isRequest = (s: Step) => s.op?.op === 'send'
const isHeldOrKilled = (s: Step) => /^(held|killed)/.test(String(s.answer))
/** Arrows the diagram draws: one per request, and one back per answer that came (a release's or a let-go's included). */
const REQUESTS = RUN.steps.filter(isRequest).length
const ANSWERS = RUN.steps.filter((s) => (isRequest(s) && !isHeldOrKilled(s)) || s.op?.op === 'release' || s.op?.op === 'let-go').length
const GRADE_LITERALS = [A.apiKey, B.apiKey, ...A.accounts, ...B.accounts]

describe('a failing history as text', () => {
  it('prints one line per step, marks the failing one, and ends with expected against got and the course rule', () => {
    const lines = timelineText(SHOWN).map(String)
    expect(lines.slice(0, 11).map((l) => l.startsWith('✗'))).toEqual([...Array(10).fill(false), true])
    expect(lines[0]).toContain('[instance 1]')
    expect(lines[0]).toContain('ledger A0 -500, B0 +500')
    expect(lines[3]).toContain("clock +30000 ms (k1's lease-end)")
    expect(lines.slice(11).join('\n')).toMatch(
      /step 11 left what the contract allows \(course rule, beyond draft-07 §2\.6\):\n {2}expected: the first answer replayed[^\n]*\n {2}got: {6}200 <script>/,
    )
  })

  it("names each step's instance in the learner's language; the page and the replay keep the English, which the replay reads the settings from", () => {
    expect(SHOWN.instances.map(String)).toEqual(['instance 1', 'instance 2 (clock −30 s)', 'instance 3 (clock +30 s)'])
    expect(String(labelAtPeriods(instanceLabel(3, 1, 0), 'LAB_LEASE_MS=2000, LAB_KEY_TTL_MS=9000'))).toBe('bank at LAB_LEASE_MS=2000, LAB_KEY_TTL_MS=9000')
    const ko = timelineText(SHOWN).map((l) => say('ko', l))
    expect(ko[0]).toContain('[인스턴스 1]')
    expect(ko.join('\n')).toContain('[인스턴스 3(시계 +30 s)]')
    expect(ko.join('\n')).not.toMatch(/\[instance \d/)
    expect(say('zh-CN', labelAtPeriods(instanceLabel(6, 2, -30_000), 'LAB_LEASE_MS=2000, LAB_KEY_TTL_MS=9000'))).toBe(
      '实例 2（时钟 −30 s），LAB_LEASE_MS=2000, LAB_KEY_TTL_MS=9000',
    )
    const html = timelineHtml(SHOWN)
    for (const label of ['instance 1', 'instance 2 (clock −30 s)', 'instance 3 (clock +30 s)']) expect(html).toContain(label)
    expect(html).not.toContain('인스턴스')
    expect(replayOf(SHOWN).start.join('\n')).toContain('LAB_CLOCK_OFFSET_MS=-30000')
  })
})

describe('the page, as HTML', () => {
  const html = timelineHtml(SHOWN)
  it('is self-contained: the same Content-Security-Policy, no script, the server text escaped', () => {
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`)
    expect(html).not.toMatch(/<script/i)
    expect(html).toContain('200 &#60;script&#62;alert(1)&#60;/script&#62;')
    expect(html).not.toMatch(/(src|href)="(?!data:|#)/)
  })
  it('draws a lane per instance, the clients and the database, and an SVG arrow per request and per answer', () => {
    expect([...html.matchAll(/<div class="head[^"]*" data-lane="\d+"[^>]*>([^<]*)</g)].map((m) => m[1])).toEqual([
      'client A · client B',
      ...SHOWN.instances.map(String),
      'database and ledger',
    ])
    expect(html.match(/<svg class="arrow request/g)).toHaveLength(REQUESTS)
    expect(html.match(/<svg class="arrow answer/g)).toHaveLength(ANSWERS)
  })
  it('names no Unix socket of the grade and offers the replay script', () => {
    expect(html).not.toContain(SOCKET)
    expect(html).not.toContain('--unix-socket')
    const href = /<a class="script" download="([^"]+)" href="([^"]+)"/.exec(html)!
    expect(href[1]).toBe('stage-6-seed-42.sh')
    expect(decodeURIComponent(href[2]!.replace(/^data:text\/x-shellscript;charset=utf-8,/, '').replaceAll('&#39;', "'"))).toBe(timelineScript(SHOWN))
  })
})

describe('the replay script', () => {
  const script = timelineScript(SHOWN)
  const lines = script.split('\n')
  it('is named after the page, and its shell syntax is sound', () => {
    expect(timelineScriptName(SHOWN)).toBe('stage-6-seed-42.sh')
    const checked = spawnSync('sh', ['-n'], { input: script, encoding: 'utf8' })
    expect(checked.status, checked.stderr).toBe(0)
  })
  it('starts from npm run serve with the clock where the grade began, one server per instance with its skew', () => {
    const { start, clockStart } = replayOf(SHOWN)
    expect(clockStart).toBe(T0)
    expect(start).toEqual([
      `LAB_DATABASE_URL=postgres://… npm run serve -- 6 --port 3000 --clock ${T0}`,
      `LAB_ADMIN_TOKEN=$ADMIN LAB_DATABASE_URL=postgres://… LAB_CLOCK_OFFSET_MS=-30000 npm run serve -- 6 --port 3001 --clock ${T0}`,
      `LAB_ADMIN_TOKEN=$ADMIN LAB_DATABASE_URL=postgres://… LAB_CLOCK_OFFSET_MS=30000 npm run serve -- 6 --port 3002 --clock ${T0}`,
    ])
    expect(script).toContain(': "${ADMIN:?')
  })
  it('recreates the clients and accounts through the admin API, and keeps their keys and ids in variables', () => {
    expect(lines.filter((l) => /^(KEY|ACC)_[AB]\d?=\$\(curl /.test(l)).map((l) => l.split('=')[0])).toEqual([
      'KEY_A',
      'ACC_A0',
      'ACC_A1',
      'KEY_B',
      'ACC_B0',
      'ACC_B1',
    ])
    expect(script).toContain(
      `"$URL1"/admin/clients -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-raw '{"name":"history-a"}' | json apiKey)`,
    )
    expect(script).toContain(`"$URL1"/accounts -H "Authorization: Bearer $KEY_A" -H 'Content-Type: application/json' --data-raw '{"balance":40000}' | json id)`)
  })
  it('leaves no API key, account id or socket of the grade anywhere, comments included', () => {
    for (const literal of [...GRADE_LITERALS, SOCKET, '--unix-socket', 'localhost']) expect(script).not.toContain(literal)
  })
  it('sends each request as the grade did, to its instance, its literals replaced by variables', () => {
    const curls = lines.filter((l) => l.startsWith('curl -sS -i '))
    expect(curls).toHaveLength(REQUESTS)
    expect(curls[0]).toBe(
      `curl -sS -i -X POST "$URL1"/transfers -H 'Content-Type: application/json' -H 'Authorization: Bearer '"$KEY_A" -H 'Idempotency-Key: ${K0}' --data-raw '{"from":"'"$ACC_A0"'","to":"'"$ACC_B0"'","amount":500,"memo":"say \\"hi\\", it'\\''s me"}'; echo`,
    )
    // The last one: to instance 3, its spelling, its extra header, its bytes (the escaped account id written plainly, with a comment saying so).
    const last = script.slice(script.indexOf('curl -sS -i -X POST "$URL3"/TRANSFERS/'))
    expect(last).toMatch(
      /^curl -sS -i -X POST "\$URL3"\/TRANSFERS\/ .* -H 'X-Request-Id: req-7f3a' --data-raw '\{ "amount" : 5e2,\n "to":"'"\$ACC_B0"'", "from" : "'"\$ACC_A0"'"/,
    )
    expect(script).toContain('sent plainly here, the same JSON')
  })
  it('does each admin step as the grade did: hold, held requests in the background, the clock on every instance, let-go by call number, release, crashes', () => {
    expect(script).toContain(`admin "$URL1"/admin/core '{"hold":true}'`)
    expect(script).toMatch(/--data-raw '[^\n]*' >"\$OUT\/step-3" 2>&1 & P3=\$!\nwait_core "\$URL1" inflight 1 >\/dev\/null/)
    for (const u of ['URL1', 'URL2', 'URL3']) expect(script).toContain(`admin "$${u}"/admin/clock '{"nowMs":'"$((CLOCK0 + 30000))"'}'`)
    expect(script).toMatch(
      /admin "\$URL2"\/admin\/core '\{"holdNext":1\}'\n# [^\n]*\ncurl [^\n]*>"\$OUT\/step-5" 2>&1 & P5=\$!\nCALL5=\$\(wait_core "\$URL2" held 1\)/,
    )
    expect(script).toContain(`admin "$URL2"/admin/core '{"letGo":{"call":'"$CALL5"',"fails":true}}'\nshow 5 "$P5"`)
    expect(script).toContain(`admin "$URL1"/admin/core '{"hold":false}'\nshow 3 "$P3"`)
    // Skipped by the grade: skipped here.
    expect(script).not.toContain('"failNext"')
    // SIGKILL of instance 3: its pid from /health, then a restart on its port, skew and clock.
    expect(script).toContain(`kill -9 "$(curl -sS "$URL3"/health | json pid)"`)
    expect(script).toContain(`LAB_CLOCK_OFFSET_MS=30000 npm run serve -- 6 --port \${URL3##*:} --clock $((CLOCK0 + 30000))"`)
    // The fault point: armed, the request, and the restart the lost answer calls for.
    expect(script).toMatch(/admin "\$URL1"\/admin\/core '\{"crashAfterCommit":true\}'\ncurl [^\n]*"\$KEY_B"[^\n]*; echo\nwait_up "\$URL1" /)
    expect(script).toContain(`printf '%s\\n' '  the grade got: 200 <script>alert(1)</script>'`)
  })
  it('keeps whatever the server said on its comment line: a newline in an answer starts no command', () => {
    const evil = structuredClone(SHOWN)
    evil.run.steps[0]!.answer = '201 tr_1\nrm -rf "$HOME"/nothing\n'
    evil.run.mismatch!.got = "x'\nrm -rf nothing"
    const text = timelineScript(evil)
    expect(text.split('\n').filter((l) => l.startsWith('rm '))).toEqual([])
    expect(spawnSync('sh', ['-n'], { input: text, encoding: 'utf8' }).status).toBe(0)
  })
  it('finds when the history began even when it begins with a clock move, and counts moves without a recorded time', () => {
    const steps: Step[] = [
      { index: 1, instance: undefined, key: undefined, what: 'the clock moves to one second later', answer: '', clock: '+1000 ms', at: T0 + 1_000 },
      { index: 2, instance: 0, key: 'k0', what: 'x', answer: '201', at: T0 + 1_000 },
      { index: 3, instance: 0, key: undefined, what: 'the purge interval passes', answer: '', clock: '+3600000 ms (the purge interval)' },
    ]
    expect(timesOf(steps)).toEqual({
      start: T0,
      rel: new Map([
        [1, 1_000],
        [2, 1_000],
        [3, 3_601_000],
      ]),
    })
    expect(timesOf(steps.map(({ at: _, ...s }) => s))).toEqual({
      rel: new Map([
        [1, 1_000],
        [2, 1_000],
        [3, 3_601_000],
      ]),
    })
  })
  it('says so where a request cannot be sent again: one still held when the history ended is not recorded', () => {
    const held = structuredClone(SHOWN)
    held.run.steps = held.run.steps.slice(0, 3)
    delete held.run.steps[2]!.exchange
    held.run.mismatch = { step: 3, expected: 'x', got: 'y' }
    const text = timelineScript(held)
    expect(text).toContain('# its request was not recorded (it still waited in the core when its history moved on): it cannot be sent again here')
    expect(text).toContain('# The history ends with step 3 still waiting in a held core')
    expect(text.split('\n').filter((l) => l.startsWith('curl -sS -i '))).toHaveLength(1)
  })
})

describe('a failing history as a sequence diagram', () => {
  it.skipIf(!haveChromium)(
    `renders in Chromium: lanes, arrows from lane to lane, notes on their lanes, the failing step marked, nothing overflowing${noChromium}`,
    async () => {
      const scratch = scratchDir('timeline')
      const file = join(scratch.path, 'history.html')
      writeFileSync(file, timelineHtml(SHOWN))
      const context = await openChromium(join(scratch.path, 'profile'))
      try {
        const page = context.pages()[0] ?? (await context.newPage())
        await page.setViewportSize({ width: 1280, height: 1000 })
        const requested: string[] = []
        page.on('request', (r) => requested.push(r.url()))
        await page.goto(pathToFileURL(file).href)
        expect(requested, 'the page fetches nothing but itself').toEqual([pathToFileURL(file).href])

        expect(await page.$$eval('.head', (els) => els.map((el) => el.textContent))).toEqual([
          'client A · client B',
          ...SHOWN.instances.map(String),
          'database and ledger',
        ])
        // Each lifeline's x, lane by lane (0 the clients, 1–3 the instances, 4 the database).
        const lifelines = await page.$$eval('.lifeline', (els) =>
          els.map((el) => {
            const r = el.getBoundingClientRect()
            return { x: r.left + r.width / 2, top: r.top, bottom: r.bottom }
          }),
        )
        expect(lifelines).toHaveLength(5)
        for (const [i, l] of lifelines.entries()) if (i > 0) expect(l.x).toBeGreaterThan(lifelines[i - 1]!.x + 100)

        // Every arrow runs from the clients' lifeline to its instance's, a request to the right, an answer back.
        const arrows = await page.$$eval('svg.arrow', (svgs) =>
          svgs.map((svg) => {
            const box = svg.closest('.exchange')!
            const line = svg.querySelector('line')!.getBoundingClientRect()
            return {
              step: Number(box.getAttribute('data-step')),
              lane: Number(box.getAttribute('data-lane')),
              kind: svg.classList.contains('request') ? 'request' : 'answer',
              failed: svg.classList.contains('failed'),
              from: svg.querySelector('line')!.getAttribute('x1'),
              left: line.left,
              right: line.right,
              visible: line.width > 0,
            }
          }),
        )
        expect(arrows).toHaveLength(REQUESTS + ANSWERS)
        expect(arrows.filter((a) => a.kind === 'request')).toHaveLength(REQUESTS)
        for (const a of arrows) {
          expect(a.visible).toBe(true)
          expect(Math.abs(a.left - lifelines[0]!.x), `step ${a.step}'s ${a.kind} starts at the clients`).toBeLessThan(3)
          expect(Math.abs(a.right - lifelines[a.lane]!.x), `step ${a.step}'s ${a.kind} reaches lane ${a.lane}`).toBeLessThan(3)
          expect(a.from).toBe(a.kind === 'request' ? '0' : '100%')
        }
        expect(arrows.map((a) => `${a.step}:${a.kind}:${a.lane}`)).toEqual([
          '1:request:1',
          '1:answer:1',
          '3:request:1',
          '5:request:2',
          '6:answer:2',
          '7:answer:1',
          '10:request:1',
          '11:request:3',
          '11:answer:3',
        ])
        expect(arrows.filter((a) => a.failed).map((a) => a.step)).toEqual([11])

        // Notes sit on the lane they act on: centred on its lifeline.
        const notes = await page.$$eval('.note, .lane-end > span', (els) =>
          els.map((el) => {
            const r = el.getBoundingClientRect()
            const step = el.closest('[data-step]')!.getAttribute('data-step')
            return { step: Number(step), cls: el.className, text: el.textContent, x: r.left + r.width / 2, left: r.left, right: r.right }
          }),
        )
        const on = (step: number, cls: string) => notes.find((n) => n.step === step && n.cls.split(' ').includes(cls))!
        const centred = (step: number, cls: string, lane: number) =>
          expect(Math.abs(on(step, cls).x - lifelines[lane]!.x), `step ${step}'s ${cls} note on lane ${lane}`).toBeLessThan(3)
        centred(2, 'admin', 1)
        centred(3, 'held', 1)
        centred(5, 'held', 2)
        centred(6, 'admin', 2)
        centred(7, 'admin', 1)
        centred(8, 'skipped', 3)
        centred(9, 'crash', 3)
        centred(10, 'crash', 1)
        for (const step of [1, 7, 10]) centred(step, 'ledger', 4)
        expect(on(1, 'ledger').text).toBe('ledger A0 -500, B0 +500')
        // The clock's move: across the instances and the database.
        const clock = on(4, 'clock')
        expect(clock.text).toBe("clock +30000 ms (k1's lease-end)")
        expect(clock.left).toBeLessThan(lifelines[1]!.x)
        expect(clock.right).toBeGreaterThan(lifelines[4]!.x)
        expect(clock.left).toBeGreaterThan(lifelines[0]!.x)

        // The failing step: marked, its answer text and not markup, expected against got below it.
        expect(await page.locator('.num.failed').textContent()).toBe('✗ 11')
        expect(await page.locator('.band.failed').getAttribute('data-step')).toBe('11')
        expect(await page.locator('.msg.answer.failed .label').textContent()).toBe('200 <script>alert(1)</script>')
        expect(await page.locator('script').count()).toBe(0)
        const verdict = await page.locator('.verdict').textContent()
        expect(verdict).toContain('course rule, beyond draft-07 §2.6')
        expect(verdict).toContain('expected the first answer replayed')
        expect(verdict).toContain('got 200 <script>alert(1)</script>')

        // Nothing overflows: not the page, not a label, a note or a lane's name.
        expect(await page.$eval('html', (root) => root.scrollWidth <= root.clientWidth)).toBe(true)
        const overflowing = await page.$$eval('.head, .note, .lane-end > span, .msg .label, .verdict, pre', (els) =>
          els.filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.textContent?.slice(0, 40)),
        )
        expect(overflowing).toEqual([])
        // No two items of a step's row drawn over each other: every note of a row lies clear of its arrows' labels.
        const rowsClear = await page.$$eval('.exchange', (boxes) =>
          boxes.every((box) => {
            const labels = [...box.querySelectorAll('.label, .lane-end > span')].map((el) => el.getBoundingClientRect())
            return labels.every((a, i) => labels.every((b, j) => i >= j || a.bottom <= b.top + 0.5 || b.bottom <= a.top + 0.5))
          }),
        )
        expect(rowsClear).toBe(true)

        // The replay: shown, and downloadable as the very script timelineScript() writes.
        expect(await page.locator('pre.replay').textContent()).toBe(timelineScript(SHOWN))
        expect(await page.locator('pre.serve').allTextContents()).toEqual(replayOf(SHOWN).start)
        const [download] = await Promise.all([page.waitForEvent('download'), page.locator('a.script').click()])
        expect(download.suggestedFilename()).toBe('stage-6-seed-42.sh')
        expect(readFileSync((await download.path())!, 'utf8')).toBe(timelineScript(SHOWN))

        const shots = join(repoRoot, '.lab', 'histories')
        mkdirSync(shots, { recursive: true })
        await page.locator('.scroll').screenshot({ path: join(shots, 'timeline-example.png') })
      } finally {
        await context.close()
        scratch.dispose()
      }
    },
  )
})
