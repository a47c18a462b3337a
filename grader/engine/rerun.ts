// The command line that grades the same thing again: the same stage, seed and
// code, narrowed as the run was (--only, --no-regression), with as many random
// histories (--histories: another count is another verdict). Printed under a
// failure, stored with a roster's results, and drawn in a history's page; a
// folder or a server command is shell-quoted, so pasting it runs exactly this.
import { quote } from 'shell-quote'
import type { ServerCommand } from '#harness/serverCommand.ts'
import { describeSource, type Source } from '#harness/workspace.ts'

/** The command that grades this again: same stage, seed and code, as narrowed (--only, --no-regression) and as many histories. */
export function rerunCommand(
  stage: number,
  seed: number,
  source: Source = { kind: 'starter' },
  server?: ServerCommand,
  narrowed: { only?: string[]; noRegression?: boolean; histories?: number } = {},
): string {
  const foreign = server && ['--server', server.line, ...(server.cwd === process.cwd() ? [] : ['--dir', server.cwd])]
  const narrowing = [
    ...(narrowed.only ?? []).flatMap((id) => ['--only', id]),
    ...(narrowed.noRegression ? ['--no-regression'] : []),
    ...(narrowed.histories === undefined ? [] : ['--histories', String(narrowed.histories)]),
  ]
  return `npm run grade -- ${stage} --seed ${seed}${foreign ? ` ${quote(foreign)}` : describeSource(source)}${narrowing.length ? ` ${quote(narrowing)}` : ''}`
}
