// A sentence the grader says to a learner, kept as a message template and
// its values until it is printed, so that it is printed in the reader's
// language. A check builds one where it decides (`fail(say('copies', …))`);
// the report says it in --lang; the result document (--json, the store, an
// autograder platform) gets its English, through toJSON and toString.
//
// The templates are the ICU MessageFormat style that i18next and FormatJS
// use, cut to what the course needs: {name} placeholders, typed, so that a
// call names exactly the template's values, and a translation may put them
// in any order. No plural forms: Chinese and Korean do not inflect a noun for
// its number, and the English writes "row(s)". A value is evidence (a status,
// a key, an amount, a body: printed as it is) or a Phrase of its own, said in
// the same language.
//
// Every template has an id, `<scope>.<key>`, and is registered once, when
// its module loads (phrases()); a language pack (i18n/<lang>.json, under
// "messages") translates it by that id, and npm run i18n:status lists those
// it lacks.
import type { Lang } from './language.ts'
import { messageText } from './packs.ts'

export type Value = string | number | Phrase
/** What a learner is told: a Phrase, or a plain string that is evidence (or not yet a template). */
export type Line = string | Phrase

/** The names of the {placeholders} in a template: a word in braces (braces around anything else, a JSON object in the text, are text). */
export type Placeholders<S extends string> = S extends `${string}{${infer Name}}${infer Rest}`
  ? (Name extends `${string}${' ' | '"' | ':' | ',' | '{'}${string}` ? never : Name) | Placeholders<Rest>
  : never
/** The values a template takes: none, or one for each placeholder. */
export type ValuesOf<S extends string> = [Placeholders<S>] extends [never] ? [] : [Record<Placeholders<S>, Value>]

/** The placeholder names a text uses: the same set in a translation as in its English. */
export const placeholdersOf = (text: string): string[] => [...new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!))].sort()

/** Every template, by id: the English a pack translates. */
const TEMPLATES = new Map<string, string>()

/** Records template `id`; an id registered twice is a grader bug, and throws. */
export function registerTemplate(id: string, english: string): void {
  if (TEMPLATES.has(id)) throw new Error(`message template ${id} is registered twice`)
  TEMPLATES.set(id, english)
}

/** Template `english` under `id`, in `lang`, its placeholders filled in one pass (a value holding braces stays as it is). */
export function fill(lang: Lang, id: string, english: string, values: Readonly<Record<string, Value>> = {}): string {
  return messageText(lang, id, english).replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = values[name]
    return value === undefined ? whole : value instanceof Phrase ? value.in(lang) : String(value)
  })
}

export class Phrase {
  constructor(
    readonly id: string,
    readonly english: string,
    readonly values: Readonly<Record<string, Value>> = {},
  ) {}

  /** This sentence in `lang`: its translation where the pack has a current one, else the English. */
  in(lang: Lang): string {
    return fill(lang, this.id, this.english, this.values)
  }

  /** The same sentence with `f` applied to its evidence (its string values, in nested phrases too): e.g. a workspace's paths made the learner's. */
  mapEvidence(f: (evidence: string) => string): Phrase {
    const values = Object.fromEntries(
      Object.entries(this.values).map(([name, v]) => [name, typeof v === 'string' ? f(v) : v instanceof Phrase ? v.mapEvidence(f) : v]),
    )
    return new Phrase(this.id, this.english, values)
  }

  toString(): string {
    return this.in('en')
  }

  /** A result document holds the English (it is the same in every language). */
  toJSON(): string {
    return this.in('en')
  }
}

/** `line` in `lang`: a Phrase translated, a string as it is. */
export const say = (lang: Lang, line: Line): string => (typeof line === 'string' ? line : line.in(lang))

/**
 * Registers `table`'s templates under `scope` and returns the function that
 * makes a Phrase of one: `const say = phrases('stage0', { copies: 'flag {n} copies' })`,
 * then `say('copies', { n: 3 })`. An id registered twice is a grader bug, and throws.
 */
export function phrases<const T extends Record<string, string>>(scope: string, table: T) {
  for (const [key, english] of Object.entries(table)) registerTemplate(`${scope}.${key}`, english)
  return <K extends keyof T & string>(key: K, ...[values]: ValuesOf<T[K]>): Phrase =>
    new Phrase(`${scope}.${key}`, table[key]!, values as Record<string, Value> | undefined)
}

type ListSeparator = 'comma' | 'semicolon' | 'lines' | 'and' | 'or'

const listed = phrases('list', {
  comma: '{list}, {item}',
  semicolon: '{list}; {item}',
  lines: '{list}\n{item}',
  and: '{list} and {item}',
  or: '{list} or {item}',
})

/** `items` as one list, joined with ", " (or "; ", one a line, " and " or " or ") in English and as each language joins a list. */
export function listOf(items: readonly [Phrase, ...Line[]], separator?: ListSeparator): Phrase
export function listOf(items: readonly Line[], separator?: ListSeparator): Line
export function listOf(items: readonly Line[], separator: ListSeparator = 'comma'): Line {
  return items.reduce<Line>((list, item, i) => (i === 0 ? item : listed(separator, { list, item })), '')
}

/** Every template registered so far, by id (the checks' register when grader/checks/index.ts loads). */
export const templates = (): ReadonlyMap<string, string> => TEMPLATES
