// Child side of learnerCode.ts: reads {file, name, inputs} on stdin, answers JSON on stdout.
import { pathToFileURL } from 'node:url'

const chunks: Buffer[] = []
for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
const { file, name, inputs } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
  file: string
  name: string
  inputs: string[] | null
}
// The parent's time limit for the learner's code starts here, not at spawn.
// Flushed before the import: a learner file that loops forever blocks the
// event loop, and pipes are asynchronous outside Linux.
await new Promise((done) => process.stdout.write('ready\n', done))
const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>
const exported = mod[name]
let results: unknown[]
if (inputs === null) {
  results = [{ ok: true, value: exported }]
} else if (typeof exported !== 'function') {
  results = inputs.map(() => ({ ok: false, error: `${name} is not an exported function` }))
} else {
  results = inputs.map((text) => {
    try {
      return { ok: true, value: (exported as (v: unknown) => unknown)(JSON.parse(text)) }
    } catch (error) {
      return { ok: false, error: String((error as Error)?.message ?? error) }
    }
  })
}
process.stdout.write(JSON.stringify(results))
