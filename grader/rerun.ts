// The command line that grades the same thing again: the same stage, seed and
// code, narrowed as the run was (--only, --no-regression). Printed under a
// failure, stored with a roster's results, and drawn in a history's page; a
// folder or a server command is shell-quoted, so pasting it runs exactly this.
import { quote } from 'shell-quote'
import type { ServerCommand } from '#harness/serverCommand.ts'
import { describeSource, type Source } from '#harness/workspace.ts'

/** The command that grades this again: same stage, seed and code, and as narrowed (--only, --no-regression). */
export function rerunCommand(
  stage: number,
  seed: number,
  source: Source = { kind: 'starter' },
  server?: ServerCommand,
  narrowed: { only?: string[]; noRegression?: boolean } = {},
): string {
  const foreign = server && ['--server', server.line, ...(server.cwd === process.cwd() ? [] : ['--dir', server.cwd])]
  const narrowing = [...(narrowed.only ?? []).flatMap((id) => ['--only', id]), ...(narrowed.noRegression ? ['--no-regression'] : [])]
  return `npm run grade -- ${stage} --seed ${seed}${foreign ? ` ${quote(foreign)}` : describeSource(source)}${narrowing.length ? ` ${quote(narrowing)}` : ''}`
}
