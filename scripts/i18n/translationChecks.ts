// What keeps a translation in step with its English source, each check as a
// list of differences (empty when it holds) that name the file, the section
// and what differs. TRANSLATION_CHECKS are what test/i18n.docs.test.ts fails
// on (npm test); staleSections is what npm run i18n:status lists as still to
// translate (scripts/i18n/todo.ts), never a failure (CONTRIBUTING.md,
// "Translations"). A check that compares a section with its English (code
// blocks, inline code, links, numbers, glossary terms) does so only where the
// section is stamped current: a section behind its English translates an
// older text, and is listed instead.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Pack } from '#harness/i18n/packs.ts'
import { type Language, stampOf } from '#harness/i18n/stamp.ts'
import { repoRoot } from '#harness/paths.ts'
import type { ForbiddenForm, GlossaryTerm } from './glossary.ts'
import { extract, type Section, slugs, splitSections } from './markdownSections.ts'
import { asEnglishLink, exists, linkedFile, type Pair, sourceText, translatable } from './translations.ts'

/** The English heading that names a section, with its parent's when the heading repeats ("The story" under each stage of LESSONS.md). */
function title(sections: Section[], s: Section): string {
  if (s.index === 0) return '(top of the file)'
  if (sections.filter((x) => x.heading === s.heading).length === 1) return s.heading
  const parent = sections.slice(0, s.index).findLast((x) => x.level > 0 && x.level < s.level)
  return parent ? `${parent.heading} › ${s.heading}` : `${s.heading} (section ${s.index})`
}
const where = (pair: Pair, s: Section) => `${pair.translated} § ${title(pair.source, s)}`

export type Stale = { index: number; heading: string; recorded?: string; current: string }

/** The translated sections whose recorded stamp is not the current English section's (missing included). */
export function staleSections(pair: Pair): Stale[] {
  if (pair.source.length !== pair.translation.length) return []
  return pair.source.filter(translatable).flatMap((s) => {
    const current = stampOf(sourceText(s))
    const recorded = pair.translation[s.index]!.stamp
    return recorded === current ? [] : [{ index: s.index, heading: title(pair.source, s), recorded, current }]
  })
}

/** Whether the translated section records the stamp of its English section as it is now. */
export const isCurrent = (pair: Pair, s: Section): boolean => pair.translation[s.index]?.stamp === stampOf(sourceText(s))

export const headingCount = (pair: Pair): string =>
  `${pair.translated}: ${pair.translation.length - 1} headings, the English has ${pair.source.length - 1}; a translation keeps every heading, so its sections cannot be matched`

const sorted = (xs: string[]) => [...xs].sort()
/** The items of xs that ys lacks, counting repeats (a multiset difference). */
function missingFrom(xs: string[], ys: string[]): string[] {
  const left = [...ys]
  return xs.filter((x) => {
    const i = left.indexOf(x)
    if (i >= 0) left.splice(i, 1)
    return i < 0
  })
}

/**
 * Same sections and heading levels, in every section (they are how a
 * translation's sections are matched with the English); and in each section
 * stamped current, the same code blocks in order, the same inline code, the
 * same links and every number of the English.
 */
export function structureDifferences(pair: Pair): string[] {
  const { source, translation } = pair
  if (source.length !== translation.length) return [headingCount(pair)]
  return source.flatMap((s) => {
    const t = translation[s.index]!
    const at = where(pair, s)
    if (s.level !== t.level) return [`${at}: heading level ${t.level}, the English has ${s.level} ("${t.heading}")`]
    if (!isCurrent(pair, s)) return []
    const en = extract(s.index === 0 ? sourceText(s).split('\n') : s.lines)
    const tr = extract(t.text)
    const out: string[] = []
    if (en.codeBlocks.length !== tr.codeBlocks.length) out.push(`${at}: ${tr.codeBlocks.length} code blocks, the English has ${en.codeBlocks.length}`)
    en.codeBlocks.forEach((block, i) => {
      if (tr.codeBlocks[i] !== undefined && withoutComments(tr.codeBlocks[i]) !== withoutComments(block))
        out.push(`${at}: code block ${i + 1} differs from the English:\n${tr.codeBlocks[i]}\n--- English:\n${block}`)
    })
    const spans = [missingFrom(en.codeSpans, tr.codeSpans), missingFrom(tr.codeSpans, en.codeSpans)]
    if (spans[0]!.length + spans[1]!.length > 0)
      out.push(`${at}: inline code differs from the English: missing ${show(spans[0]!)}; not in the English ${show(spans[1]!)}`)
    const links = tr.links.map((l) => asEnglishLink(l, pair.language, pair.translated))
    const linkDiff = [missingFrom(en.links, links), missingFrom(links, en.links)]
    if (linkDiff[0]!.length + linkDiff[1]!.length > 0)
      out.push(`${at}: links differ from the English: missing ${show(linkDiff[0]!)}; not in the English ${show(linkDiff[1]!)}`)
    const numbers = new Set(tr.numbers)
    const lost = [...new Set(en.numbers)].filter((n) => !numbers.has(n))
    if (lost.length > 0) out.push(`${at}: numbers of the English missing: ${lost.join(', ')}`)
    return out
  })
}

/** The comment marker of a fenced block's language, when its comments are prose a translation translates (shell and TypeScript). */
function commentMarker(block: string): '#' | '//' | undefined {
  const info = /^(?:`{3,}|~{3,})\s*([\w-]*)/.exec(block)?.[1]?.toLowerCase() ?? ''
  if (['sh', 'bash', 'shell', 'console'].includes(info)) return '#'
  if (['ts', 'typescript', 'js', 'javascript'].includes(info)) return '//'
  return undefined
}

/**
 * A code block as it must stay byte for byte: in a shell or TypeScript block,
 * each comment (a marker after a space or at the start of the line, to the
 * end of the line) is the prose of the block: it reads as one mark ` #…`,
 * whatever its text and the padding before it. The code before it, every
 * other block and every other line stay exactly as in the English, so a
 * translated comment passes and a changed command, a comment taken out or
 * one added does not.
 */
export function withoutComments(block: string): string {
  const marker = commentMarker(block)
  if (!marker) return block
  const comment = marker === '#' ? /(^|\s)#(?=\s|$).*$/ : /(^|\s)\/\/(?=\s|$).*$/
  const lines = block.split('\n')
  return lines.map((line, i) => (i === 0 || i === lines.length - 1 || !comment.test(line) ? line : `${line.replace(comment, '').trimEnd()} #…`)).join('\n')
}

const show = (xs: string[]) =>
  xs.length === 0
    ? 'nothing'
    : sorted(xs)
        .map((x) => `\`${x}\``)
        .join(', ')

const anchorCache = new Map<string, Set<string>>()

/** The anchors of a Markdown file: its headings' slugs and its explicit `<a id>`/`<a name>` anchors (a translation's English ones). */
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path)
  if (!anchors) {
    const text = readFileSync(resolve(repoRoot, path), 'utf8')
    anchors = new Set([...slugs(splitSections(text)), ...[...text.matchAll(/<a (?:id|name)="([^"]+)"/g)].map((m) => m[1]!)])
    anchorCache.set(path, anchors)
  }
  return anchors
}

/** Every fragment link of the translated file reaches a file that exists and an anchor in it. */
export function brokenFragments(pair: Pair): string[] {
  return pair.translation.flatMap((t) =>
    extract(t.text).links.flatMap((link) => {
      const file = linkedFile(pair.translated, link)
      if (!file || !link.includes('#')) return []
      if (!exists(file)) return [`${where(pair, pair.source[t.index] ?? t)}: ${link} links a file that does not exist`]
      if (!file.endsWith('.md')) return []
      const fragment = link.slice(link.indexOf('#') + 1)
      return anchorsOf(file).has(fragment) ? [] : [`${where(pair, pair.source[t.index] ?? t)}: ${link} has no anchor #${fragment} in ${file}`]
    }),
  )
}

/** In each section stamped current, each glossary term the English section uses appears in its chosen translation (or a listed variant). */
export function glossaryMisses(pair: Pair, terms: GlossaryTerm[]): string[] {
  if (pair.source.length !== pair.translation.length) return []
  return pair.source
    .filter((s) => translatable(s) && isCurrent(pair, s))
    .flatMap((s) => {
      const english = extract(sourceText(s).split('\n')).prose
      const translated = extract(pair.translation[s.index]!.text).prose.replace(/\s+/g, ' ')
      return terms
        .filter((term) => term.english.some((e) => wordPattern(e).test(english)))
        .filter((term) => !term[pair.language].some((variant) => translated.includes(variant)))
        .map((term) => `${where(pair, s)}: the English says "${term.english.join(' / ')}", the translation uses none of ${term[pair.language].join(' / ')}`)
    })
}

/** The term as a whole word or words, any case, across a line break, with a simple plural; not inside a hyphenated name (the Idempotency-Key header is a name, not the term). */
function wordPattern(term: string): RegExp {
  const words = term.split(/\s+/).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`(?<![\\p{L}\\p{N}_-])${words.join('\\s+')}(?:s|es)?(?![\\p{L}\\p{N}_-])`, 'iu')
}

/** `text` with each forbidden form of `language` it contains named, with what to write instead: one message per form and place. */
function forbiddenIn(at: string, text: string, language: Language, forms: ForbiddenForm[]): string[] {
  return forms
    .filter((form) => form.language === language)
    .flatMap((form) => form.forbidden.filter((f) => text.includes(f)).map((f) => ({ f, form })))
    .map(({ f, form }) => `${at}: uses "${f}", a form the glossary forbids in ${language} (${form.why}); write ${form.instead}`)
}

/** Every forbidden form a translated file contains, per section, anywhere in it (prose, inline code, code blocks' comments). */
export function forbiddenForms(pair: Pair, forms: ForbiddenForm[]): string[] {
  return pair.translation.flatMap((t) => forbiddenIn(where(pair, pair.source[t.index] ?? t), t.text.join('\n'), pair.language, forms))
}

/** Every forbidden form a language pack's texts contain (its stages' titles, summaries and hints, its checks' titles and hints, its messages). */
export function forbiddenFormsInPack(language: Language, pack: Pack, forms: ForbiddenForm[]): string[] {
  const file = `i18n/${language}.json`
  const texts: [string, string][] = [
    ...Object.entries(pack.stages).flatMap(([n, s]): [string, string][] => [
      [`stage ${n} title`, s.title],
      [`stage ${n} summary`, s.summary],
      ...s.hints.map((h, i): [string, string] => [`stage ${n} hint ${i + 1}`, h]),
    ]),
    ...Object.entries(pack.checks).flatMap(([id, c]): [string, string][] => [
      [`check ${id} title`, c.title],
      [`check ${id} hint`, c.hint],
    ]),
    ...Object.entries(pack.messages).map(([id, m]): [string, string] => [`message ${id}`, m.text]),
  ]
  return texts.flatMap(([what, text]) => forbiddenIn(`${file} ${what}`, text, language, forms))
}

/** What the translation checks compare with: the glossary's core terms (those marked ★) and its forbidden forms. */
export type Reference = { coreTerms: GlossaryTerm[]; forbidden: ForbiddenForm[] }

/**
 * The checks npm test runs on every translated file (test/i18n.docs.test.ts):
 * breakage only, never a section left behind its English. The headings, the
 * fragment links and the forbidden forms hold in every section; what is
 * compared with the English, only in the sections stamped current.
 */
export const TRANSLATION_CHECKS: readonly { name: string; differences: (pair: Pair, reference: Reference) => string[] }[] = [
  {
    name: 'has the English headings at the same levels, and in each current section its code blocks, inline code, links and numbers',
    differences: (pair) => structureDifferences(pair),
  },
  { name: 'links only to anchors that exist', differences: (pair) => brokenFragments(pair) },
  // Only the terms marked ★ in docs/glossary.md (28 of 39): on the drafts,
  // checking every term flagged 60 sections, all correct prose, because the
  // unmarked words have a second sense in the English ("check" the verb,
  // "replays the teller's incident", an account's "owner", "phase" in
  // general, "client" the customer or the program) or conjugate in Korean
  // ("hold the core").
  { name: 'in each current section, the glossary word for every core term its English uses', differences: (pair, r) => glossaryMisses(pair, r.coreTerms) },
  { name: 'uses none of the forms the glossary forbids, anywhere in the file', differences: (pair, r) => forbiddenForms(pair, r.forbidden) },
]

/** Everything npm test fails on in one translated file: every check of TRANSLATION_CHECKS. */
export const translationFailures = (pair: Pair, reference: Reference): string[] => TRANSLATION_CHECKS.flatMap((check) => check.differences(pair, reference))
