// The starter rule (CONTRIBUTING.md, "Starters"), held line by line. A stage's
// starter is the previous stage's solution with this stage's work taken out:
//   - every code line of a starter is a line of the previous stage's solution
//     of that file (kept) or of this stage's own (given already solved),
//     verbatim but for indentation; or the same line with names it does not
//     use yet left out of a `{ … }` list or prefixed with `_`; or a
//     placeholder with a `// TODO` at most two code lines away, in the same
//     paragraph;
//   - a line that both solutions have is never dropped;
//   - every TODO reads `// TODO:`, `// TODO <n>:` (numbered in reading order)
//     or `// TODO (<label>):`, the label being a bullet of the stage README;
//   - a stage file the learner does not edit is its solution, byte for byte.
// Comments are the starter's own and are not compared. Text only: no server,
// no grade.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { course, type Stage } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'

/** How far (in code lines, either way, no blank line between) a placeholder may stand from its TODO. */
const REACH = 2

/**
 * Placeholders too many for a TODO each: one TODO on its own above the code
 * names a change that runs through the whole file. Stage 6 ports stage 5 to
 * PostgreSQL with this instance's Date.now() for every time; `TODO (clock)`
 * at the top says so, and these are its lines. A new one is a decision.
 */
const FILE_WIDE_TODOS: Record<string, { todo: string; lines: string[] }> = {
  '06-production/keyStore.ts': {
    todo: '// TODO (clock):',
    lines: [
      'lease_until      BIGINT,',
      'expires_at       BIGINT NOT NULL,  -- first request + TTL',
      "VALUES ($1, $2, $3, $4, 'in_progress', $5, $6, $7)",
      '[clientId, route, key, fingerprint, owner, now + leaseMs, now + ttlMs],',
      '`SELECT fingerprint, status, owner, lease_until > $4 AS leased, expires_at <= $4 AS expired,',
      'lease_until - $4 AS "leftMs",',
      '[clientId, route, key, now],',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the starter's line, as text
      "await pool.query(`DELETE FROM idempotency_keys WHERE ${WHERE} AND expires_at <= $4 AND (status = 'completed' OR lease_until <= $4)`, [clientId, route, key, now])",
      '`UPDATE idempotency_keys SET owner = $4, lease_until = $6',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the starter's line, as text
      "WHERE ${WHERE} AND owner = $5 AND status = 'in_progress' AND lease_until <= $7`,",
      '[clientId, route, key, owner, row.owner, now + leaseMs, now],',
    ],
  },
}

type Line = { n: number; kind: 'blank' | 'comment' | 'todo' | 'code'; text: string }

/** Each line of a file, trimmed, a trailing `// …` comment cut off code. */
function lines(source: string): Line[] {
  let inBlock = false
  let inTodo = false
  return source.split('\n').map((raw, i): Line => {
    const n = i + 1
    const text = raw.trim()
    if (inBlock) {
      if (text.includes('*/')) inBlock = false
      return { n, kind: 'comment', text }
    }
    if (text === '') {
      inTodo = false
      return { n, kind: 'blank', text }
    }
    if (text.startsWith('/*')) {
      inBlock = !text.includes('*/')
      inTodo = false
      return { n, kind: 'comment', text }
    }
    if (text.startsWith('//')) {
      // A TODO runs on over the comment lines that follow it.
      if (/^\/\/ TODO\b/.test(text)) inTodo = true
      return { n, kind: inTodo ? 'todo' : 'comment', text }
    }
    inTodo = false
    return { n, kind: 'code', text: text.replace(/\s+\/\/\s.*$/, '') }
  })
}

/** `{ a, b }` lists of plain names, and the line with each replaced by `{…}`. */
function nameLists(text: string): { skeleton: string; lists: string[][] } {
  const lists: string[][] = []
  const skeleton = text.replace(/\{([^{}]*)\}/g, (whole, inner: string) => {
    const names = inner.split(',').map((s) => s.trim())
    if (!names.every((s) => /^(type )?[A-Za-z_$][\w$]*( as [A-Za-z_$][\w$]*)?$/.test(s))) return whole
    lists.push(names)
    return '{…}'
  })
  return { skeleton, lists }
}

/** The solution's line with names the starter does not use yet left out of its `{ … }` lists, or prefixed `_`. */
function narrows(starter: string, solution: string): boolean {
  const unused = starter.replace(/(?<![\w$])_([A-Za-z$])/g, '$1')
  if (unused === solution) return true
  const a = nameLists(unused)
  const b = nameLists(solution)
  return a.lists.length > 0 && a.skeleton === b.skeleton && a.lists.every((names, i) => names.length > 0 && names.every((name) => b.lists[i]!.includes(name)))
}

/** A TODO at most REACH code lines above or below line i, with no blank line between. */
function todoWithinReach(all: Line[], i: number): boolean {
  for (const step of [-1, 1]) {
    let code = 0
    for (let j = i + step; j >= 0 && j < all.length; j += step) {
      const l = all[j]!
      if (l.kind === 'blank') break
      if (l.kind === 'todo') return true
      if (l.kind === 'code' && ++code > REACH) break
    }
  }
  return false
}

/** A line that says nothing of its own: braces, `try {`, `} catch (error) {`, `return {`. */
const structural = (text: string) => (text.match(/[A-Za-z_$][\w$]*/g) ?? []).every((w) => ['try', 'catch', 'error', 'return', 'for', 'else'].includes(w))

const read = (path: string) => readFileSync(resolve(repoRoot, path), 'utf8')
const previousOf = (stage: Stage) => course.stages.find((s) => s.number === stage.number - 1)

/** Every breach of the rule in one starter file, each naming the stage, the file and the line. */
function breaches(stage: Stage, file: string, starterText = read(`stages/${stage.folder}/${file}`)): string[] {
  const here = `stages/${stage.folder}/${file}`
  const own = `solutions/${stage.folder}/${file}`
  const prevStage = previousOf(stage)
  const previous = prevStage && existsSync(resolve(repoRoot, 'solutions', prevStage.folder, file)) ? `solutions/${prevStage.folder}/${file}` : undefined
  const starter = lines(starterText)
  const prevLines = previous ? lines(read(previous)).filter((l) => l.kind === 'code') : []
  const ownLines = lines(read(own)).filter((l) => l.kind === 'code')
  const known = new Set([...prevLines, ...ownLines].map((l) => l.text))
  const fileWide = FILE_WIDE_TODOS[`${stage.folder}/${file}`]
  const out: string[] = []

  starter.forEach((l, i) => {
    if (l.kind !== 'code' || known.has(l.text)) return
    if ([...prevLines, ...ownLines].some((s) => narrows(l.text, s.text))) return
    if (todoWithinReach(starter, i)) return
    if (fileWide?.lines.includes(l.text) && starter.some((t) => t.n < l.n && t.text.startsWith(fileWide.todo))) return
    out.push(
      `${here}:${l.n}: \`${l.text}\` is not a line of ${previous ?? '(no earlier solution of this file)'} (kept) nor of ${own} (given), ` +
        `nor one of theirs with unused names left out, and no // TODO stands within ${REACH} code lines of it`,
    )
  })

  // What the stage keeps, the starter keeps: a line both solutions have is never dropped.
  const count = (ls: Line[], text: string) => ls.filter((l) => l.kind === 'code' && l.text === text).length
  for (const l of prevLines) {
    if (structural(l.text) || prevLines.findIndex((p) => p.text === l.text) !== prevLines.indexOf(l)) continue
    const wanted = Math.min(count(prevLines, l.text), count(ownLines, l.text))
    if (count(starter, l.text) < wanted)
      out.push(`${here}: drops \`${l.text}\` (${previous}:${l.n}), which ${own} keeps: a starter keeps the solved code its stage does not change`)
  }

  // Each TODO: `// TODO:`, `// TODO <n>:` in reading order, or `// TODO (<label>):` with a label of the README.
  const readme = read(`stages/${stage.folder}/README.md`)
  const todos = starter.filter((t) => t.kind === 'todo' && t.text.startsWith('// TODO'))
  if (todos.length === 0) out.push(`${here}: no // TODO: a starter marks what the stage asks for`)
  let number = 0
  for (const t of todos) {
    const m = /^\/\/ TODO(?: (\d+)| \(([a-z][a-z -]*)\))?: \S/.exec(t.text)
    if (!m) {
      out.push(`${here}:${t.n}: \`${t.text}\` is not \`// TODO: …\`, \`// TODO <n>: …\` or \`// TODO (<label>): …\``)
      continue
    }
    if (m[1] !== undefined && Number(m[1]) !== ++number) out.push(`${here}:${t.n}: TODO ${m[1]} is the TODO numbered ${number} in reading order`)
    if (m[2] !== undefined && !readme.includes(`*(${m[2]})*`) && !readme.includes(`**${m[2]}**`))
      out.push(`${here}:${t.n}: the label (${m[2]}) is no bullet of stages/${stage.folder}/README.md (\`*(${m[2]})*\` or \`**${m[2]}**\`)`)
    if (m[2] === undefined && !readme.includes(`\`${file}\``)) out.push(`${here}:${t.n}: stages/${stage.folder}/README.md does not name \`${file}\``)
  }
  return out
}

describe('the starter rule (CONTRIBUTING.md, "Starters")', () => {
  const starters = course.stages.flatMap((stage) => stage.edits.map((file) => [`stages/${stage.folder}/${file}`, stage, file] as const))
  it.for(starters)('%s keeps the previous solution, gives its own, and marks the rest with a TODO', ([, stage, file]) => {
    expect(breaches(stage, file)).toEqual([])
  })

  it('a stage file the learner does not edit is its solution, byte for byte', () => {
    for (const stage of course.stages)
      for (const file of readdirSync(resolve(repoRoot, 'stages', stage.folder)).filter((f) => f.endsWith('.ts') && !stage.edits.includes(f)))
        expect(read(`stages/${stage.folder}/${file}`), `stages/${stage.folder}/${file}`).toBe(read(`solutions/${stage.folder}/${file}`))
  })

  it('a solution carries no TODO', () => {
    for (const stage of course.stages)
      for (const file of stage.edits) expect(read(`solutions/${stage.folder}/${file}`), `solutions/${stage.folder}/${file}`).not.toMatch(/\/\/ TODO\b/)
  })

  describe('the rule can fail', () => {
    const stage4 = course.stages.find((s) => s.number === 4)!
    const starter = read(`stages/${stage4.folder}/keyStore.ts`)
    const at = (text: string) => starter.split('\n').findIndex((l) => l.includes(text)) + 1

    it('a kept line changed by hand, with no TODO near it, is named by stage, file and line', () => {
      const kept = '"DELETE FROM idempotency_keys WHERE key = ? AND owner = ? AND status = \'in_progress\'"'
      const line = at(kept)
      const broken = starter.replace(kept, '"DELETE FROM idempotency_keys WHERE key = ? AND status = \'in_progress\'"')
      expect(broken).not.toBe(starter)
      expect(breaches(stage4, 'keyStore.ts', broken)).toContainEqual(expect.stringMatching(new RegExp(`^stages/04-replay/keyStore\\.ts:${line}: `)))
    })

    it('a kept line deleted is named, with the line of the solution it came from', () => {
      const broken = starter.replace(
        '    release(key: string, owner: string): void {\n      release.run(key, owner)\n',
        '    release(key: string, owner: string): void {\n',
      )
      expect(broken).not.toBe(starter)
      expect(breaches(stage4, 'keyStore.ts', broken)).toContainEqual(
        expect.stringContaining('stages/04-replay/keyStore.ts: drops `release.run(key, owner)` (solutions/03-in-progress/keyStore.ts:'),
      )
    })

    it('a TODO with a label its README does not have is named', () => {
      const broken = starter.replace('// TODO (store):', '// TODO (persist):')
      expect(breaches(stage4, 'keyStore.ts', broken)).toContainEqual(expect.stringContaining('the label (persist) is no bullet'))
    })
  })
})
