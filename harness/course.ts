// Reads course.json, the one ordered description of the course.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { repoRoot } from './paths.ts'

export type Stage = {
  number: number
  slug: string
  folder: string
  title: string
  summary: string
  /** The files a learner edits, relative to the stage folder. */
  edits: string[]
  hints: string[]
  /** Check ids, in the order the grader runs them. */
  checks: string[]
  /** Sum of the points of the stage's checks. */
  points: number
  /** Where the bank keeps its data: SQLite unless said otherwise (stage 6: 'postgres'). */
  database?: 'postgres'
}

export type Course = { title: string; stages: Stage[] }

export const course: Course = JSON.parse(readFileSync(resolve(repoRoot, 'course.json'), 'utf8'))

/** A stage name no stage answers to; `stages` lists the ones there are (a command says it in the learner's language). */
export class UnknownStageError extends Error {
  constructor(
    readonly stageName: string,
    readonly stages: string,
  ) {
    super(`unknown stage "${stageName}". Stages: ${stages}`)
  }
}

/** Accepts `3`, `stage3`, `03`, `in-progress` or `03-in-progress`. */
export function findStage(name: string): Stage {
  const n = /^(?:stage-?)?(\d+)$/i.exec(name.trim())
  const stage = n ? course.stages.find((s) => s.number === Number(n[1])) : course.stages.find((s) => s.slug === name || s.folder === name)
  if (!stage) throw new UnknownStageError(name, course.stages.map((s) => `${s.number} (${s.slug})`).join(', '))
  return stage
}

export function stageByNumber(n: number): Stage {
  return findStage(String(n))
}
