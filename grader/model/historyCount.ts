// How many random histories a histories check runs when not told: enough to
// find a combination in a few seconds on stage 5, few enough that a grade
// stays quick. `--histories N` and the repetitions ask for more.
export const HISTORIES_DEFAULT = 30
