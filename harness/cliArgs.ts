// node:util's parseArgs for the course's commands: a command line it cannot
// read (an unknown option, an option without its value, a word where none is
// taken) is the user's mistake, not the tool failing. It ends the process
// with one line naming the problem, the command's usage, and exit code 2:
// no stack trace.
import { parseArgs, type ParseArgsConfig } from 'node:util'
import chalk from 'chalk'
import { chooseLanguage, type Lang, LanguageError, languageOfTag } from './i18n/language.ts'
import { t } from './i18n/messages.ts'

type ParseArgsError = Error & { code: string }

/** An error parseArgs throws for a malformed command line (ERR_PARSE_ARGS_*), as opposed to any other. */
export function isParseArgsError(error: unknown): error is ParseArgsError {
  return error instanceof Error && typeof (error as ParseArgsError).code === 'string' && (error as ParseArgsError).code.startsWith('ERR_PARSE_ARGS_')
}

/** The problem on one line, e.g. `unknown option --no-such-option`, in `lang`. */
export function describeParseArgsError(error: ParseArgsError, lang: Lang = 'en'): string {
  // Node's messages quote the offending word first: 'Unknown option '--x'', 'Option '--dir <value>' argument missing'.
  const quoted = /'([^']*)'/.exec(error.message)?.[1]
  const option = quoted?.replace(/ <value>$/, '')
  if (option !== undefined) {
    if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return t(lang, 'usage.unknownOption', { option })
    if (error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return t(lang, 'usage.unexpectedArgument', { argument: option })
    if (/ argument missing/.test(error.message)) return t(lang, 'usage.needsValue', { option })
    if (/ does not take an argument/.test(error.message)) return t(lang, 'usage.takesNoValue', { option })
  }
  return error.message.split('. ')[0]!
}

/**
 * parseArgs(config), except that a malformed command line prints the problem
 * and `usage` (in the command line's language, when it is a function of it)
 * on stderr and exits 2. Any other error is thrown as it is.
 */
export function parseArgsOrExit<T extends ParseArgsConfig>(usage: string | ((lang: Lang) => string), config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config)
  } catch (error) {
    if (!isParseArgsError(error)) throw error
    const lang = languageOfCommandLine(config.args ?? process.argv.slice(2))
    console.error(chalk.red(describeParseArgsError(error, lang)))
    console.error(typeof usage === 'string' ? usage : usage(lang))
    process.exit(2)
  }
}

/**
 * The language to tell a malformed command line in: its --lang when that
 * names one the grader speaks (not remembered: the command did not run),
 * else the locale's or the remembered one (chooseLanguage), else English.
 */
export function languageOfCommandLine(args: readonly string[] = process.argv.slice(2)): Lang {
  const at = args.findIndex((a) => a === '--lang' || a.startsWith('--lang='))
  const flag = at < 0 ? undefined : args[at]!.startsWith('--lang=') ? args[at]!.slice('--lang='.length) : args[at + 1]
  const named = flag === undefined ? undefined : languageOfTag(flag)
  if (named) return named
  try {
    return chooseLanguage(undefined)
  } catch {
    return 'en'
  }
}

/**
 * The language of a command (chooseLanguage, with --lang's value), except
 * that a language the grader does not speak exits 2 with one line naming the
 * ones it does, not the whole usage: the rest of the command line was fine.
 */
export function languageOrExit(flag: string | undefined): Lang {
  try {
    return chooseLanguage(flag)
  } catch (error) {
    if (!(error instanceof LanguageError)) throw error
    console.error(chalk.red(error.message))
    process.exit(2)
  }
}
