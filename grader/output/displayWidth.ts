// The columns a text takes in a terminal: a Hangul or Han character takes
// two, so a table of translated titles is padded by columns, not characters.

/** East Asian wide and fullwidth ranges (Hangul Jamo and syllables, CJK, fullwidth forms). */
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6]/

export const displayWidth = (text: string): number => [...text].reduce((n, ch) => n + (WIDE.test(ch) ? 2 : 1), 0)

/** `text` padded with spaces to `columns` terminal columns. */
export const padToWidth = (text: string, columns: number): string => text + ' '.repeat(Math.max(0, columns - displayWidth(text)))
