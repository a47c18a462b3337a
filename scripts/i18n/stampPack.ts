// npm run i18n:stamp-pack -- <zh-CN|ko> <stage N | check ID | message ID>
//
// The grader's language packs (i18n/<lang>.json): after updating an item's
// translation, records that it translates the English as it is now. A stamp
// is your word that the item says what the English says: never stamp an item
// you did not update. What a pack lacks or has out of date is listed by
// npm run i18n:status (scripts/i18n/cli.ts) and failed on by test/i18n.grader.test.ts.
import { readFileSync, writeFileSync } from 'node:fs'
import { course, findStage } from '#harness/course.ts'
import '#grader/phrasebook.ts'
import { templates } from '#harness/i18n/phrase.ts'
import { checkSource, PackSchema, packFile, stageSource } from '#harness/i18n/packs.ts'
import { LANGUAGES, type Language, stampOf } from '#harness/i18n/stamp.ts'
import { checksFor } from '#grader/checks/index.ts'

const USAGE = `usage: npm run i18n:stamp-pack -- <${LANGUAGES.join('|')}> <stage N | check ID | message ID>`

const checks = course.stages.flatMap((s) => checksFor(s.number))

/** The English an item translates now, or why there is none. */
function englishOf(kind: string, id: string): string {
  if (kind === 'stage') return stageSource(findStage(id))
  if (kind === 'check') {
    const check = checks.find((c) => c.id === id)
    if (check) return checkSource(check)
  }
  const template = kind === 'message' ? templates().get(id) : undefined
  if (template !== undefined) return template
  throw new Error(`no ${kind} ${id} in the course`)
}

function stamp(lang: Language, kind: string, id: string): number {
  const file = packFile(lang)
  const pack = PackSchema.parse(JSON.parse(readFileSync(file, 'utf8')))
  const section = kind === 'stage' ? pack.stages : kind === 'check' ? pack.checks : pack.messages
  const key = kind === 'stage' ? String(findStage(id).number) : id
  const item = section[key]
  if (!item) throw new Error(`i18n/${lang}.json has no ${kind} ${id} to stamp: translate it first`)
  item.source = stampOf(englishOf(kind, id))
  writeFileSync(file, `${JSON.stringify(pack, null, 2)}\n`)
  console.log(`i18n/${lang}.json ${kind} ${id}: stamped ${item.source}`)
  return 0
}

function main(args: string[]): number {
  const [lang, kind, id] = args
  if (args.length === 3 && (LANGUAGES as readonly string[]).includes(lang!) && ['stage', 'check', 'message'].includes(kind!))
    return stamp(lang as Language, kind!, id!)
  console.error(USAGE)
  return 2
}

try {
  process.exitCode = main(process.argv.slice(2))
} catch (error) {
  console.error((error as Error).message)
  process.exitCode = 2
}
