// Reads a V8 .cpuprofile (from BENCH_CPU_PROF) and prints where the time went:
//   tsx bench/profileSummary.ts FILE [--top N] [--focus NAME,NAME]
// Self time shows the hot leaves (SQLite calls, hashing, JSON); total time of
// the --focus functions (default: the layer's entry points) shows what each
// step of a request costs, callees included. A profile holds synchronous
// stacks: work that runs after an `await` is not counted under the caller
// (the transfer's transaction, after the core call, is not under `handle`).
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { parseArgs } from 'node:util'
import { repoRoot } from '#harness/paths.ts'

type Node = {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  hitCount?: number
  children?: number[]
}
type Profile = { nodes: Node[]; startTime: number; endTime: number; samples: number[] }

const DEFAULT_FOCUS = ['handle', 'claim', 'complete', 'fingerprint', 'canonicalize', 'parseIdempotencyKey', 'execute', 'transfer']

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, focus: { type: 'string' } },
})
const profile: Profile = JSON.parse(readFileSync(positionals[0]!, 'utf8'))
const focus = values.focus ? values.focus.split(',') : DEFAULT_FOCUS
const msPerSample = (profile.endTime - profile.startTime) / 1000 / profile.samples.length
const byId = new Map(profile.nodes.map((n) => [n.id, n]))

const where = (n: Node) => {
  const { functionName, url, lineNumber } = n.callFrame
  const file = url.startsWith('file://') ? relative(repoRoot, new URL(url).pathname) : url
  return `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : '(native)'}`
}

// Self time per function.
const self = new Map<string, number>()
for (const n of profile.nodes) self.set(where(n), (self.get(where(n)) ?? 0) + (n.hitCount ?? 0))

// Total time per focused function name (in the repository's own files): each
// sample counted once per name, even when the function appears twice on the stack.
const total = new Map<string, number>()
function walk(n: Node, stack: Set<string>) {
  const name = n.callFrame.functionName
  // Our code only: Express's router has a `handle` too.
  const ours = n.callFrame.url.startsWith('file://') && !n.callFrame.url.includes('/node_modules/')
  const entered = ours && focus.includes(name) && !stack.has(name)
  if (entered) stack.add(name)
  for (const s of stack) total.set(s, (total.get(s) ?? 0) + (n.hitCount ?? 0))
  for (const c of n.children ?? []) walk(byId.get(c)!, stack)
  if (entered) stack.delete(name)
}
walk(profile.nodes[0]!, new Set())

const all = profile.samples.length
const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((s, [, v]) => s + v, 0)
const busy = all - idle
const pct = (hits: number) => `${((100 * hits) / busy).toFixed(1).padStart(5)}%`
console.log(`${positionals[0]}: ${(busy * msPerSample).toFixed(0)} ms busy of ${(all * msPerSample).toFixed(0)} ms (percentages of busy time)`)
console.log('\nself time')
for (const [k, v] of [...self]
  .filter(([k]) => !k.startsWith('(idle)'))
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(values.top)))
  console.log(`  ${pct(v)}  ${k}`)
console.log('\ntotal time (callees included)')
for (const name of focus) console.log(`  ${pct(total.get(name) ?? 0)}  ${name}`)
