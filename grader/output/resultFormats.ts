// What `--json FILE` writes, by `--format`: the v1 grade result itself
// (docs/grade-result.md) when none is named, else an autograder platform's
// own document made from it. One file, one flag for its shape: a platform
// reads exactly one file, and the v1 result stays what every other reader
// (scores:import, the CI template) gets.
import { RESULT_SCHEMA, type GradeResult } from '../engine/gradeResult.ts'
import { toClassroom50 } from './classroom50.ts'
import { toGradescope } from './gradescope.ts'

const PLATFORMS = { gradescope: toGradescope, classroom50: toClassroom50 } as const

export type ResultFormat = keyof typeof PLATFORMS

export class ResultFormatError extends Error {}

/** The --format value, checked at the edge: an unknown one names the supported ones. */
export function parseResultFormat(value: string): ResultFormat {
  if (Object.hasOwn(PLATFORMS, value)) return value as ResultFormat
  throw new ResultFormatError(
    `--format ${value}: not a format this grader writes. Formats: ${Object.keys(PLATFORMS).join(', ')} (without --format, --json writes the ${RESULT_SCHEMA} result)`,
  )
}

/** The document --json writes for one grade: the v1 result, or the platform's. */
export const resultDocument = (result: GradeResult, format: ResultFormat | undefined): unknown => (format ? PLATFORMS[format](result) : result)
