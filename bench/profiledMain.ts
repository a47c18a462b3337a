// bank/main.ts under the V8 CPU profiler: the profile is written to
// BENCH_CPU_PROF_FILE when the server exits (on the SIGTERM the bench sends).
// Node refuses --cpu-prof in NODE_OPTIONS, and ServerProcess runs its entry
// with fixed flags, hence an entry script that starts the profiler itself.
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'

const file = process.env.BENCH_CPU_PROF_FILE
if (!file) throw new Error('BENCH_CPU_PROF_FILE is not set')

const session = new Session()
session.connect()
session.post('Profiler.enable')
session.post('Profiler.start')
// An in-thread inspector session answers synchronously, so this completes
// inside the 'exit' handler, where nothing asynchronous would.
process.on('exit', () => {
  session.post('Profiler.stop', (error, result) => {
    if (!error) writeFileSync(file, JSON.stringify(result.profile))
  })
})

await import('#bank/main.ts')
