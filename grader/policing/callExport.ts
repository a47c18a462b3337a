// Child side of learnerCode.ts: bundled with the learner's file, which it
// imports only once it has said it is ready (the time limit of the learner's
// code starts there). Reads the request on stdin, answers JSON on stdout.
import Database from 'better-sqlite3'

/** What the parent asks of the export. */
export type ExportRequest =
  /** Call it with each input (JSON texts, parsed here: JSON.parse('-0') keeps -0, and lone surrogates survive as escapes). */
  | { kind: 'call'; name: string; inputs: string[] }
  /** Its value, as JSON. */
  | { kind: 'read'; name: string }
  /** It is a SQL query: its text, then the `id` column of its rows on each of these SQLite files, opened read-only. */
  | { kind: 'query'; name: string; files: string[] }

export type CallResult = { ok: true; value: unknown } | { ok: false; error: string }

/** Runs the request against the module `load` imports (the learner's file). */
export async function answerExportRequest(load: () => Promise<Record<string, unknown>>): Promise<void> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  const request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest
  // Flushed before the import: a learner file that loops forever blocks the
  // event loop, and pipes are asynchronous outside Linux.
  await new Promise((done) => process.stdout.write('ready\n', done))
  const exported = (await load())[request.name]
  process.stdout.write(JSON.stringify(answer(request, exported)))
}

function answer(request: ExportRequest, exported: unknown): CallResult[] {
  const attempt = (run: () => unknown): CallResult => {
    try {
      return { ok: true, value: run() }
    } catch (error) {
      return { ok: false, error: String((error as Error)?.message ?? error) }
    }
  }
  if (request.kind === 'read') return [{ ok: true, value: exported }]
  if (request.kind === 'call') {
    if (typeof exported !== 'function') return request.inputs.map(() => ({ ok: false, error: `${request.name} is not an exported function` }))
    return request.inputs.map((text) => attempt(() => (exported as (v: unknown) => unknown)(JSON.parse(text))))
  }
  if (typeof exported !== 'string' || !exported.trim()) return [{ ok: false, error: `${request.name} is not a SQL query (a string)` }]
  return [
    { ok: true, value: exported },
    ...request.files.map((file) =>
      attempt(() => {
        const db = new Database(file, { readonly: true, fileMustExist: true })
        try {
          return (db.prepare(exported).all() as Array<{ id?: unknown }>).map((row) => String(row.id))
        } finally {
          db.close()
        }
      }),
    ),
  ]
}
