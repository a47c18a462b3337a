// Where a grading run keeps its things: a temp folder for database files, and,
// when grading another checkout, an overlay of that checkout's learner files on
// this course's own stage folders.
import { type Phrase, phrases } from './i18n/phrase.ts'
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { quote } from 'shell-quote'
import type { Stage } from './course.ts'
import { onCleanup } from './processes.ts'
import { repoRoot } from './paths.ts'
import { NOBODY, reachableTmpBase } from './unprivileged.ts'

/** Which copy of the learner files to grade. */

const say = phrases('workspace', {
  starterStoodIn: "{checkout} has no {file}: this course's starter stood in for it",
})
export type Source = { kind: 'starter' } | { kind: 'solution' } | { kind: 'dir'; path: string }

/** The options that name `source`, shell-quoted: a folder name is the learner's choice, and gets pasted into a shell. */
export function describeSource(source: Source): string {
  return source.kind === 'starter' ? '' : source.kind === 'solution' ? ' --solution' : ` ${quote(['--dir', source.path])}`
}

/** What the copied-answer scan (grader/policing/copiedAnswers.ts) looks at for one stage. */
export type ScanTarget = {
  /** The stage whose files these are: it may use given pieces of earlier stages only. */
  stage: number
  /** The folder the files run from (this course's stage folder, or an overlay of it). */
  dir: string
  /** What a learner calls this folder, e.g. `stages/05-scope-ttl`: used in the messages. */
  shownAs: string
  /** The learner's own copy of the folder, when grading another checkout: relative paths are resolved from there too. */
  original?: string
  /** That checkout's root: its solutions/ is refused as well as ours. */
  checkout?: string
}

export class Workspace {
  /** The data folder: the one folder its servers write. */
  readonly tmp: string
  private overlayRoot: string | undefined
  private builds: string | undefined
  private dbCount = 0
  /** Also removes the folders if the grader is stopped by a signal. */
  private readonly forget = onCleanup(() => this.dispose())

  /**
   * `forNobody`: its servers run as nobody (isolation.ts, "user"): the data
   * folder is nobody's, and the bundles and the overlay are made readable to
   * nobody, not writable; all of them where nobody can reach them.
   */
  constructor(
    readonly source: Source,
    private readonly forNobody = false,
  ) {
    this.tmp = mkdtempSync(join(this.base(), 'idem-lab-'))
    if (forNobody) chownSync(this.tmp, NOBODY, NOBODY)
  }

  private base(): string {
    return this.forNobody ? reachableTmpBase() : tmpdir()
  }

  /** mkdtemp makes a folder only its owner may enter: nobody must read the code it holds. */
  private readable(dir: string): string {
    if (this.forNobody) chmodSync(dir, 0o755)
    return dir
  }

  newDbPath(): string {
    return join(this.tmp, `bank-${++this.dbCount}.sqlite`)
  }

  /**
   * Where this run's bundles go (serverBuild.ts): beside the data folder, not
   * in it, so that a server, which may write its data folder, reads its
   * bundle and cannot change it.
   */
  get buildDir(): string {
    this.builds ??= this.readable(mkdtempSync(join(this.base(), 'idem-lab-build-')))
    return this.builds
  }

  /** The folder whose files stand for this stage in this run. */
  stageDir(stage: Stage): string {
    if (this.source.kind === 'starter') return resolve(repoRoot, 'stages', stage.folder)
    if (this.source.kind === 'solution') return resolve(repoRoot, 'solutions', stage.folder)
    return this.overlay(stage, this.source.path)
  }

  /** What the copied-answer scan looks at for this stage (copiedAnswers.ts). */
  scanTarget(stage: Stage): ScanTarget {
    const shownAs = `${this.source.kind === 'solution' ? 'solutions' : 'stages'}/${stage.folder}`
    if (this.source.kind !== 'dir') return { stage: stage.number, dir: this.stageDir(stage), shownAs }
    const original = resolve(this.source.path, 'stages', stage.folder)
    return { stage: stage.number, dir: this.stageDir(stage), shownAs, original, checkout: this.source.path }
  }

  /**
   * One line per learner file of this stage that the other checkout does not
   * have, so that this course's own starter stands in for it (a check that
   * uses another stage's file says so in its report).
   */
  borrowed(stage: Stage): Phrase[] {
    if (this.source.kind !== 'dir') return []
    const checkout = this.source.path
    return stage.edits
      .filter((file) => !existsSync(resolve(checkout, 'stages', stage.folder, file)))
      .map((file) => say('starterStoodIn', { checkout, file: `stages/${stage.folder}/${file}` }))
  }

  /**
   * Only the files the manifest says a learner edits are taken from the other
   * checkout; everything else is this course's own. The overlay lives inside
   * this repository so that `#bank/...` imports resolve to our bank.
   */
  private overlay(stage: Stage, checkout: string): string {
    if (!this.overlayRoot) {
      const base = join(repoRoot, '.lab', 'work')
      mkdirSync(base, { recursive: true })
      this.overlayRoot = this.readable(mkdtempSync(join(base, 'run-')))
    }
    const target = join(this.overlayRoot, stage.folder)
    if (existsSync(target)) return target
    const own = resolve(repoRoot, 'stages', stage.folder)
    mkdirSync(target, { recursive: true })
    for (const file of readdirSync(own)) if (file.endsWith('.ts')) cpSync(join(own, file), join(target, file))
    for (const file of stage.edits) {
      const theirs = resolve(checkout, 'stages', stage.folder, file)
      if (existsSync(theirs)) cpSync(theirs, join(target, file))
    }
    return target
  }

  /** Text (an error, a log) with overlay paths turned back into the checkout's own files, the ones to open. */
  asLearnerPaths(text: string): string {
    if (this.source.kind !== 'dir' || !this.overlayRoot) return text
    return text.replaceAll(`${this.overlayRoot}/`, `${join(this.source.path, 'stages')}/`)
  }

  /** For --keep: the folders stay after the grader exits (a kept server uses them); returns them, for the stop line. */
  keep(): string[] {
    this.forget()
    return [this.tmp, ...(this.builds ? [this.builds] : []), ...(this.overlayRoot ? [this.overlayRoot] : [])]
  }

  dispose() {
    this.forget()
    for (const dir of [this.tmp, this.builds, this.overlayRoot]) if (dir) rmSync(dir, { recursive: true, force: true })
  }
}
