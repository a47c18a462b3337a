// The benchmark works end to end: a very short run of `npm run bench` against
// the stage 0 starter and the stage 5 solution writes a complete JSON report.
// Only the shape and the signs are checked: the figures themselves depend on
// the machine (the real run is `npm run bench`, not part of `npm test`).
import { LAUNCHER } from '#harness/commands.ts'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { startGradeCli } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('bench')

afterAll(() => scratch.disposeExpectingNoneLeft('server processes left running by the bench'))

it('measures fresh keys and replays for two stages and writes the ratios', async () => {
  const file = join(scratch.path, 'bench.json')
  const args = ['--seconds', '0.3', '--rounds', '1', '--stages', '0,5', '--parts', 'load', '--json', file]
  const run = await startGradeCli(args, scratch.path, [process.execPath, LAUNCHER, 'bench/cli.ts']).done
  expect(run.code, run.stdout + run.stderr).toBe(0)
  expect(run.stdout).toContain('freshRatio')

  const report = JSON.parse(readFileSync(file, 'utf8'))
  expect(report.freshRatio).toBeGreaterThan(0)
  expect(report.replayRatio).toBeGreaterThan(0)
  expect(report.goals.freshRatio).toMatchObject({ min: 0.85, met: expect.any(Boolean) })
  expect(report.goals.replayRatio).toMatchObject({ min: 1, met: expect.any(Boolean) })
  expect(report.layers.map((l: { stage: number; label: string }) => [l.stage, l.label])).toEqual([
    [0, 'stages/00-unprotected'],
    [5, 'solutions/05-scope-ttl'],
  ])
  for (const layer of report.layers)
    for (const figures of [layer.fresh, layer.replay]) {
      expect(figures.requests).toBeGreaterThan(0)
      expect(figures.throughput).toBeGreaterThan(0)
      expect(figures.p50Ms).toBeGreaterThan(0)
      expect(figures.p99Ms).toBeGreaterThanOrEqual(figures.p50Ms)
      expect(figures.roundThroughputs).toHaveLength(1)
    }
  const [starter, final] = report.layers
  expect(report.freshRatio).toBeCloseTo(final.fresh.throughput / starter.fresh.throughput, 2)
  expect(report.replayRatio).toBeCloseTo(final.replay.throughput / starter.fresh.throughput, 2)
  // Every fresh request executed; a retry executes again on stage 0 only, and stage 5 replays the stored 201.
  expect(Object.keys(starter.fresh.outcomes)).toEqual(['201'])
  expect(starter.replay.executedPerReplay).toBe(1)
  expect(final.replay.executedPerReplay).toBe(0)
  expect(final.replay.outcomes).toEqual({ '201+replayed': final.replay.requests })
  expect(report.grading).toEqual({ skipped: expect.any(String) })
  expect(report.dayReplay).toEqual({ skipped: expect.any(String) })
  expect(report.loop).toEqual({ skipped: expect.any(String) })
})
