// npm run logs:generate -- [--seed N] [--requests N] [--out FILE]
// Without options it regenerates the committed day, logs/day.jsonl.
import { createHash } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { repoRoot } from '#harness/paths.ts'
import { parseDay } from './format.ts'
import { DAY_ATTEMPTS, DAY_FILE, DAY_SEED, generateDay } from './generator.ts'

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: String(DAY_SEED) },
    requests: { type: 'string', default: String(DAY_ATTEMPTS) },
    out: { type: 'string' },
  },
})
const seed = Number(values.seed)
const attempts = Number(values.requests)
if (!Number.isSafeInteger(seed) || !Number.isInteger(attempts) || attempts < 50) {
  console.error('usage: npm run logs:generate -- [--seed N] [--requests N ≥ 50] [--out FILE]')
  process.exit(2)
}
const out = resolve(values.out ?? resolve(repoRoot, DAY_FILE))
const text = generateDay({ seed, attempts })
writeFileSync(out, text)

const lines = parseDay(text)
const intents = new Map<string, string>()
for (const l of lines) intents.set(l.intent, l.kind)
const byKind = new Map<string, number>()
for (const kind of intents.values()) byKind.set(kind, (byKind.get(kind) ?? 0) + 1)
console.log(
  `wrote ${out}: ${lines.length} attempts, ${intents.size} intents, ${(Buffer.byteLength(text) / 1e6).toFixed(2)} MB, sha256 ${createHash('sha256').update(text).digest('hex').slice(0, 16)}…`,
)
console.log(`seed ${seed}; intents by kind: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}`)
