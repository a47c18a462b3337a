#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image
# (Ubuntu, with internet): /autograder/source holds the zip that
# gradescope/build.sh made, a closed-book copy of the course (no solutions/).
# It installs what `npm run grade` needs: Node 20 (NodeSource's apt
# repository), bubblewrap for the sandbox, then the course's own locked
# dependencies. Nothing of a submission is here yet.
set -euo pipefail

apt-get update
apt-get install -y --no-install-recommends ca-certificates curl gnupg bubblewrap util-linux
curl -fsSL https://deb.nodesource.com/setup_20.x | bash -
apt-get install -y --no-install-recommends nodejs
node --version

cd /autograder/source
npm ci --no-audit --no-fund
