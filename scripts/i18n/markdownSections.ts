// A Markdown file cut into sections at its ATX headings, and what a
// translation must carry over unchanged from each: code blocks, inline code,
// link targets, numbers. Only what the course's texts use is parsed (ATX
// headings, fenced code, inline links, autolinks), not all of CommonMark.

export type Section = {
  /** 0 for the text before the first heading, then 1, 2, … in file order. */
  index: number
  /** The heading line's text ('' for section 0). */
  heading: string
  /** 1–6, or 0 for section 0. */
  level: number
  /** The section's lines, its heading line included. */
  lines: string[]
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/
const FENCE = /^( {0,3})(`{3,}|~{3,})/

/** Splits at ATX headings outside fenced code; section 0 is whatever precedes the first heading (maybe nothing). */
export function splitSections(markdown: string): Section[] {
  const sections: Section[] = [{ index: 0, heading: '', level: 0, lines: [] }]
  let fence: string | undefined
  for (const line of markdown.replaceAll('\r\n', '\n').split('\n')) {
    const opening = FENCE.exec(line)
    if (fence === undefined && opening) fence = opening[2]
    else if (fence !== undefined && opening && opening[2]!.startsWith(fence) && line.trim() === opening[2]) fence = undefined
    const heading = fence === undefined ? HEADING.exec(line) : null
    if (heading) sections.push({ index: sections.length, heading: (heading[2] ?? '').trim(), level: heading[1]!.length, lines: [line] })
    else sections.at(-1)!.lines.push(line)
  }
  return sections
}

export type Extracted = {
  /** Each fenced block, fences included, with the opening fence's indentation taken off every line (a list may indent it). */
  codeBlocks: string[]
  /** Inline code spans' contents as rendered (a line break inside reads as a space). */
  codeSpans: string[]
  /** Targets of inline links, images and autolinks. */
  links: string[]
  /** Digit runs of the prose (outside code, link targets and HTML), with their `,`/`.` groupings. */
  numbers: string[]
  /** The prose itself: without code, link targets, HTML comments and tags. */
  prose: string
}

/** What a section carries that a translation must repeat; the heading line counts as prose. */
export function extract(lines: string[]): Extracted {
  const codeBlocks: string[] = []
  const prose: string[] = []
  let block: { fence: string; indent: number; lines: string[] } | undefined
  for (const line of lines) {
    const opening = FENCE.exec(line)
    if (!block && opening) block = { fence: opening[2]!, indent: opening[1]!.length, lines: [line.slice(opening[1]!.length)] }
    else if (block) {
      block.lines.push(line.replace(new RegExp(`^ {0,${block.indent}}`), ''))
      if (opening && opening[2]!.startsWith(block.fence) && line.trim() === opening[2]) {
        codeBlocks.push(block.lines.join('\n'))
        block = undefined
      }
    } else prose.push(line)
  }
  if (block) codeBlocks.push(block.lines.join('\n'))
  const { spans, rest } = takeCodeSpans(prose.join('\n'))
  const links: string[] = []
  const text = rest
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/\]\(\s*<?([^()\s>]*(?:\([^()\s]*\)[^()\s>]*)*)>?(?:\s+"[^"]*")?\s*\)/g, (_, target: string) => {
      links.push(target)
      return '] '
    })
    .replace(/<((?:https?|mailto):[^>\s]+)>/g, (_, target: string) => {
      links.push(target)
      return ' '
    })
    .replace(/<\/?[a-zA-Z][^>]*>/g, ' ')
  const numbers = [...text.matchAll(/\d+(?:[.,]\d+)*/g)].map((m) => m[0])
  return { codeBlocks, codeSpans: spans, links, numbers, prose: text }
}

/** Takes out inline code spans (CommonMark: a run of N backticks closed by the next run of exactly N); `rest` has each replaced by a space. */
function takeCodeSpans(text: string): { spans: string[]; rest: string } {
  const spans: string[] = []
  let rest = ''
  let i = 0
  while (i < text.length) {
    const ch = text[i]!
    if (ch === '\\' && i + 1 < text.length) {
      rest += text.slice(i, i + 2)
      i += 2
      continue
    }
    if (ch !== '`') {
      rest += ch
      i++
      continue
    }
    const run = /^`+/.exec(text.slice(i))![0]
    const close = findClosingRun(text, i + run.length, run.length)
    // A span never crosses a blank line: that ends its paragraph.
    if (close < 0 || /\n[ \t]*\n/.test(text.slice(i, close))) {
      rest += run
      i += run.length
      continue
    }
    spans.push(normalizeSpan(text.slice(i + run.length, close)))
    rest += ' '
    i = close + run.length
  }
  return { spans, rest }
}

function findClosingRun(text: string, from: number, length: number): number {
  const runs = /`+/g
  runs.lastIndex = from
  for (let m = runs.exec(text); m; m = runs.exec(text)) if (m[0].length === length) return m.index
  return -1
}

/** CommonMark's rendering of a span's content: line endings become spaces, and one space is stripped from both ends when both have one. */
function normalizeSpan(content: string): string {
  const flat = content.replace(/[ \t]*\n[ \t]*/g, ' ')
  return flat.length > 1 && flat.startsWith(' ') && flat.endsWith(' ') && flat.trim() !== '' ? flat.slice(1, -1) : flat
}

/** GitHub's anchor for each heading of a file, in order (index i for section i; '' for section 0): its rendered text lowercased, punctuation dropped, spaces as hyphens, repeats suffixed -1, -2, …. */
export function slugs(sections: Section[]): string[] {
  const seen = new Map<string, number>()
  return sections.map((s) => {
    if (s.index === 0) return ''
    const base = renderedText(s.heading)
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replaceAll(' ', '-')
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    return count === 0 ? base : `${base}-${count}`
  })
}

/** A heading's text as GitHub renders it: code spans' contents kept, link text without its target, emphasis markers and HTML tags gone. */
function renderedText(heading: string): string {
  const parts = heading.split(/(`+)([^`]*?)\1/g)
  let text = ''
  for (let i = 0; i < parts.length; i += 3) {
    text += parts[i]!.replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .replace(/(^|\W)[*_]+|[*_]+(?=\W|$)/g, '$1')
    if (i + 2 < parts.length) text += parts[i + 2]!
  }
  return text.trim()
}
