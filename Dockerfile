# The grader image: the course (bank, grader, checks, starters; no solutions/),
# its locked dependencies and bubblewrap. Each container grades ONE learner:
# CMD runs deploy/grade-index.sh, which grades the checkout on line
# JOB_COMPLETION_INDEX of a roster list (a Kubernetes Indexed Job sets it) and
# writes its result for `npm run scores:import`. docs/instructors.md,
# "Scaling out: a class of 500", says how to run it and what isolation the
# learner's code gets in a container:
#   - bwrap, if the container may make user namespaces and mount in them;
#   - else, the grader being root here, user: the learner's code runs as nobody
#     (setpriv, from util-linux);
#   - never none: the entry point refuses, unless IDEM_LAB_ALLOW_UNCONFINED=1.
# Not built by this repository's tests (no Docker there): test/deploy.test.ts
# checks this file's text and runs its CMD outside a container.
FROM node:20-bookworm-slim

# bubblewrap: the sandbox. util-linux (setpriv for the user level and the
# embedded PostgreSQL, prlimit for the sandbox's limits) is in Debian's base
# already: named so that it stays.
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap util-linux \
  && rm -rf /var/lib/apt/lists/*

WORKDIR /course
# The course's own locked dependencies (the embedded PostgreSQL's binaries, better-sqlite3, esbuild, tsx come with them).
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# Compile the two commands once, here, not in every container (harness/launch.mjs keeps them in .lab/build/).
RUN node harness/launch.mjs grader/cli/grade.ts --help > /dev/null \
  && node harness/launch.mjs grader/roster/import.ts --help > /dev/null

# Runs as root, on purpose: without the sandbox, a root grader runs the
# learner's code as nobody (isolation user); as any other user it would refuse.
CMD ["deploy/grade-index.sh"]
