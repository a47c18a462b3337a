// What the capstone prints and draws must not mislead: progress lines when
// the output is not a terminal, whose code each stage ran, and one scale for
// every panel of the chart.
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { generateDay } from '../logs/generator.ts'
import { chartHtml } from '../replay/chart.ts'
import { zeroByKind, zeroFigures, type DamageReport } from '../replay/damage.ts'
import { progressLines } from '../replay/progressLines.ts'
import { codeKind } from '../replay/provenance.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('replay-output')
afterAll(() => scratch.dispose())

function report(stage: number, code: DamageReport['code'], figures: Partial<Record<'duplicateTransfers' | 'lostTransfers', number>>): DamageReport {
  const byKind = zeroByKind()
  Object.assign(byKind['gateway-timeout'], figures)
  return {
    ...zeroFigures(),
    ...figures,
    stage,
    slug: stageByNumber(stage).slug,
    source: 'starter',
    code,
    day: { file: 'logs/day.jsonl', sha256: '0'.repeat(64), lines: 10, intents: 5 },
    requests: 10,
    skippedRetries: 0,
    replayMs: 1000,
    attemptsPerSecond: 10,
    faults: { dropResponse: 0, resetBefore: 0, cutByRestart: 0, restarts: 0 },
    instances: { count: 1, forwarded: [10], killed: [] },
    byKind,
    examples: {},
    anomalies: [],
  }
}

describe('the capstone chart', () => {
  const html = chartHtml([report(0, 'learner', { duplicateTransfers: 1_279 }), report(1, 'untouched starter', { lostTransfers: 35 })])
  const heights = [...html.matchAll(/<rect [^>]*height="([\d.]+)"[^>]*><title>stage (\d) \(([^)]+)\), gateway-timeout: (\d+)/g)].map((m) => ({
    height: Number(m[1]),
    stage: Number(m[2]),
    code: m[3],
    n: Number(m[4]),
  }))

  it('draws every panel to one scale, and prints it', () => {
    expect(heights.map((h) => h.n).sort((a, b) => a - b)).toEqual([35, 1_279])
    const [lost, dup] = [heights.find((h) => h.n === 35)!, heights.find((h) => h.n === 1_279)!]
    // 35 lost transfers stand 35/1279 as tall as 1,279 duplicates, in another panel.
    expect(lost.height / dup.height).toBeCloseTo(35 / 1_279, 2)
    expect(html).toContain('<b>One scale for every panel:</b> a full-height bar is 1,279')
  })

  it('labels each bar with whose code ran, and fades an untouched starter', () => {
    expect(heights.map((h) => [h.stage, h.code])).toEqual(
      expect.arrayContaining([
        [0, 'learner'],
        [1, 'untouched starter'],
      ]),
    )
    expect(html).toMatch(/class="n code">untouched</)
    expect(html).toMatch(/class="n code">learner</)
    expect(html).toMatch(/opacity="0\.35"><title>stage 1 \(untouched starter\)/)
    expect(html).not.toMatch(/opacity="0\.35"><title>stage 0/)
    expect(html).toContain('Stage(s) 1 ran the untouched starter.')
  })
})

describe('whose code a stage ran', () => {
  const stage1 = stageByNumber(1)
  it("solution, untouched starter, or the learner's", () => {
    expect(codeKind(stage1, { kind: 'solution' })).toBe('solution')
    const untouched = join(scratch.path, 'untouched')
    mkdirSync(join(untouched, 'stages', stage1.folder), { recursive: true })
    for (const f of stage1.edits) writeFileSync(join(untouched, 'stages', stage1.folder, f), readFileSync(resolve(repoRoot, 'stages', stage1.folder, f)))
    expect(codeKind(stage1, { kind: 'dir', path: untouched })).toBe('untouched starter')
    const edited = join(scratch.path, 'edited')
    mkdirSync(join(edited, 'stages', stage1.folder), { recursive: true })
    writeFileSync(join(edited, 'stages', stage1.folder, 'idempotency.ts'), readFileSync(resolve(repoRoot, 'solutions', stage1.folder, 'idempotency.ts')))
    expect(codeKind(stage1, { kind: 'dir', path: edited })).toBe('learner')
  })
})

describe('replay progress off a terminal', () => {
  it('progressLines prints one line per 10 %, each once', () => {
    const lines: string[] = []
    const onProgress = progressLines('stage 3', (l) => lines.push(l))
    for (let done = 0; done <= 1_000; done += 7) onProgress({ done, total: 1_000, sent: done })
    onProgress({ done: 1_000, total: 1_000, sent: 1_000 })
    expect(lines.map((l) => /^stage 3: (\d+)%/.exec(l)?.[1])).toEqual(['10', '20', '30', '40', '50', '60', '70', '80', '90', '100'])
  })

  it('npm run replay with its output piped prints the 10 % lines', { timeout: 180_000 }, async () => {
    const day = join(scratch.path, 'short.jsonl')
    writeFileSync(day, generateDay({ seed: 7, attempts: 300 }))
    const out = await new Promise<{ code: number | null; text: string }>((done) => {
      const child = spawn('npm', ['run', '--silent', 'replay', '--', '0', '--solution', '--day', day], {
        cwd: repoRoot,
        env: { ...process.env, TMPDIR: scratch.path, FORCE_COLOR: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let text = ''
      child.stdout.on('data', (c: Buffer) => (text += c))
      child.stderr.on('data', (c: Buffer) => (text += c))
      child.on('close', (code) => done({ code, text }))
    })
    expect(out.code, out.text).toBe(0)
    const percents = [...out.text.matchAll(/^stage 0: (\d+)% \(/gm)].map((m) => m[1])
    expect(percents, out.text).toEqual(['10', '20', '30', '40', '50', '60', '70', '80', '90', '100'])
    expect(out.text).toContain('solution code)')
  })
})
