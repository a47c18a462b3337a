// The committed day is exactly what its seed generates, and it is the day the
// docs describe: about 20,000 attempts, a few MB, every field valid.
import { LAUNCHER } from '#harness/commands.ts'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import { parseDay, parseTime } from '../logs/format.ts'
import { DAY_ATTEMPTS, DAY_FILE, DAY_SEED, generateDay } from '../logs/generator.ts'

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex')
const committed = readFileSync(resolve(repoRoot, DAY_FILE))

describe('the committed day', () => {
  it(`is reproduced byte for byte by npm run logs:generate (seed ${DAY_SEED}, ${DAY_ATTEMPTS} attempts)`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'day-'))
    try {
      const out = join(dir, 'day.jsonl')
      execFileSync(process.execPath, [LAUNCHER, 'logs/generate.ts', '--seed', String(DAY_SEED), '--requests', String(DAY_ATTEMPTS), '--out', out], {
        cwd: repoRoot,
        stdio: 'pipe',
      })
      const fresh = readFileSync(out)
      expect(fresh.length).toBe(committed.length)
      expect(sha256(fresh)).toBe(sha256(committed))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('is about 20,000 valid attempts over 24 hours, in time order, a few MB', () => {
    const lines = parseDay(committed.toString('utf8'))
    expect(lines).toHaveLength(DAY_ATTEMPTS)
    expect(committed.length).toBeLessThan(6 * 1024 * 1024)
    const times = lines.map((l) => parseTime(l.t))
    expect(times.every((t, i) => i === 0 || t >= times[i - 1]!)).toBe(true)
    expect(times.at(-1)! - times[0]!).toBeGreaterThan(20 * 3_600_000)
    for (const l of lines) expect(() => JSON.parse(l.body)).not.toThrow()
  })

  it('holds every incident the replay is about', () => {
    const lines = parseDay(committed.toString('utf8'))
    const kinds = new Set(lines.map((l) => l.kind))
    for (const k of [
      'gateway-timeout',
      'reserialized-retry',
      'connection-reset',
      'double-tap',
      'teller-amendment',
      'shared-key',
      'server-restart',
      'insufficient-funds',
    ])
      expect(kinds, k).toContain(k)
    // Double taps share one instant; a shared key string belongs to two clients.
    const taps = lines.filter((l) => l.cause === 'double-tap')
    for (const tap of taps) expect(lines.find((l) => l.intent === tap.intent && l.cause === 'first')!.t).toBe(tap.t)
    const shared = lines.filter((l) => l.kind === 'shared-key')
    const clientsByKey = new Map<string, Set<string>>()
    for (const l of shared) clientsByKey.set(l.key, (clientsByKey.get(l.key) ?? new Set()).add(l.client))
    expect([...clientsByKey.values()].every((c) => c.size === 2)).toBe(true)
    // Everything outside the restart group keeps clear of the kill, so exactly the planned requests are in flight.
    const killed = lines.filter((l) => l.fault === 'server-killed')
    expect(killed.length).toBeGreaterThan(1)
    const first = lines.indexOf(killed[0]!)
    expect(lines.slice(first, first + killed.length).every((l) => l.fault === 'server-killed')).toBe(true)
  })

  it('changes with the seed, and a short day has the same shape', () => {
    const a = generateDay({ seed: 1, attempts: 500 })
    const b = generateDay({ seed: 2, attempts: 500 })
    expect(a).not.toBe(b)
    expect(generateDay({ seed: 1, attempts: 500 })).toBe(a)
    expect(parseDay(a)).toHaveLength(500)
  })
})
