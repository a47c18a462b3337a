// no-credentials-at-rest (grader/checks/credentialsAtRest.ts) finds a
// credential wherever a layer may have put it: plain text, JSON with escapes,
// JSON inside a JSON string, a blob, a PostgreSQL json(b) value; and names the
// table, the column and what the credential is.
import { describe, expect, it } from 'vitest'
import { type Cell, cellTexts, findSecrets, type Secret } from '#grader/checks/credentialsAtRest.ts'

const apiKey = 'sk_0123456789abcdef0123456789abcdef'
const secrets: Secret[] = [
  { value: `Bearer ${apiKey}`, label: 'the Authorization header' },
  { value: apiKey, label: 'the API key' },
  { value: 'adm_feedface', label: 'the admin token' },
]
const cell = (value: unknown, column = 'c'): Cell => ({ table: 't', column, value })
const labels = (cells: Cell[]) => findSecrets(cells, secrets).map((f) => `${f.table}.${f.column}: ${f.secret.label} ×${f.rows}`)

describe('no-credentials-at-rest: where a credential is found', () => {
  it.for([
    ['plain text', `Bearer ${apiKey}`],
    ['a JSON object of headers', JSON.stringify({ authorization: `Bearer ${apiKey}`, host: 'x' })],
    [
      'JSON with \\u escapes',
      JSON.stringify({ authorization: `Bearer ${apiKey}` })
        .replace('B', '\\u0042')
        .replace('sk_', '\\u0073k_'),
    ],
    ['JSON inside a JSON string', JSON.stringify({ request: JSON.stringify({ headers: { authorization: `Bearer ${apiKey}` } }) })],
    ['a blob', Buffer.from(`{"authorization":"Bearer ${apiKey}"}`)],
    ['a PostgreSQL json value (parsed)', { headers: [{ name: 'authorization', value: `Bearer ${apiKey}` }] }],
  ] as const)('the Authorization header in %s', ([, value]) => {
    expect(labels([cell(value)])).toEqual(['t.c: the Authorization header ×1'])
  })

  it('the key alone, the admin token, per column, with a row count', () => {
    expect(labels([cell(`key=${apiKey}`, 'note'), cell(`x ${apiKey} y`, 'note'), cell('adm_feedface', 'cfg'), cell(42, 'n')])).toEqual([
      't.note: the API key ×2',
      't.cfg: the admin token ×1',
    ])
  })

  it('finds nothing in what a layer should keep', () => {
    const row = [cell('b2e608ce-6f94-48fc-8e95-ee4704a69ff7'), cell('{"Content-Type":"application/json"}'), cell(201), cell(new Date()), cell('{not json')]
    expect(findSecrets(row, secrets)).toEqual([])
  })

  it('reads a number and a string as they are, and stops at deep nesting', () => {
    expect(cellTexts(7)).toEqual(['7'])
    let deep = JSON.stringify(apiKey)
    for (let i = 0; i < 20; i++) deep = JSON.stringify(deep)
    expect(cellTexts(deep).length).toBeLessThan(20)
  })
})
