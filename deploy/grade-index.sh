#!/usr/bin/env bash
# The grader image's command (Dockerfile, CMD): grades ONE learner of a class,
# the checkout on line JOB_COMPLETION_INDEX of a roster list (counting from 0,
# skipping blank lines and # comments), as a Kubernetes Indexed Job runs it in
# each of its pods, and leaves the learner's v1 result, stamped with the
# learner and the time, in $IDEM_LAB_RESULTS/<index>.json for
# `npm run scores:import`. docs/instructors.md, "Scaling out: a class of 500".
#
#   IDEM_LAB_STAGE        the stage to grade (the same for the whole class)
#   IDEM_LAB_SEED         the seed (the same for the whole class, so every learner gets the same inputs)
#   IDEM_LAB_ROSTER_LIST  the list file: one checkout folder per line (relative: to the list's folder)
#   IDEM_LAB_RESULTS      the folder the result goes to, shared by every index
#   JOB_COMPLETION_INDEX  which line (Kubernetes sets it; a GitHub matrix can pass strategy.job-index)
#   IDEM_LAB_TIME_LIMIT   seconds before the grade is stopped (default 600); then no result
#
# Exit 0: graded (whatever the score), the result written. 2: nothing graded
# (a setting is wrong, the index is past the list, the learner's code would
# run unconfined, or the grader failed): the message says which. 124 or 137:
# stopped at the time limit.
set -uo pipefail
cd "$(dirname "$0")/.."

for name in IDEM_LAB_STAGE IDEM_LAB_SEED IDEM_LAB_ROSTER_LIST IDEM_LAB_RESULTS; do
  if [ -z "${!name:-}" ]; then
    echo "grade-index: $name is not set (docs/instructors.md, \"Scaling out: a class of 500\")" >&2
    exit 2
  fi
done
# The grader checks the index itself (a whole number, within the list) before it
# grades or writes anything; the file name only needs one that is safe to name.
index="${JOB_COMPLETION_INDEX:-}"
case "$index" in
  '' | *[!0-9]*) result="$IDEM_LAB_RESULTS/unindexed.json" ;;
  *) result="$IDEM_LAB_RESULTS/$index.json" ;;
esac
mkdir -p "$IDEM_LAB_RESULTS"
# A retried index must not leave an earlier attempt's file as its result.
rm -f "$result"

# npm run grade without npm in front: timeout's SIGTERM reaches the grader
# itself, which stops its servers and its PostgreSQL before it exits.
timeout --kill-after=10s "${IDEM_LAB_TIME_LIMIT:-600}s" \
  node harness/launch.mjs grader/cli/grade.ts "$IDEM_LAB_STAGE" \
  --roster-list "$IDEM_LAB_ROSTER_LIST" --roster-index env \
  --seed "$IDEM_LAB_SEED" --json "$result"
code=$?
# 0 passed, 1 some checks failed: both are a grade.
if [ "$code" -le 1 ] && [ -s "$result" ]; then exit 0; fi
[ "$code" -le 1 ] && code=2
echo "grade-index: no result for index ${index:-(unset)} (the grader exited with code $code)" >&2
exit "$code"
