// Every module that registers message templates (phrases(), harness/i18n/phrase.ts),
// loaded for the tools that list or stamp them all: npm run i18n:status and
// i18n:stamp-pack. A template registers when its module loads, so a module
// missing here would be missing from the to-do list: test/phrase.test.ts
// fails when a file calling phrases() is not reached from here. A command's
// entry point (grader/cli/*.ts with a main) keeps its templates in a module
// of its own, which it and this file import.
import '#harness/i18n/messages.ts'
import './checks/index.ts'
import './engine/grading.ts'
import './output/report.ts'
import './output/coverageTable.ts'
import './cli/usageErrors.ts'
import './cli/serveLines.ts'
import './cli/usage.ts'
import './cli/watchKeys.ts'
