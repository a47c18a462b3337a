// Setup file of every test worker: Ctrl-C of `npm test` reaches the workers
// (they share the terminal's process group), and by default a signal ends a
// worker without running any cleanup. This makes it stop the servers its
// tests started (they run in process groups of their own) and remove their
// temporary folders first, as the grader's own command-line tools do.
import { installSignalCleanup } from '#harness/processes.ts'

installSignalCleanup()
