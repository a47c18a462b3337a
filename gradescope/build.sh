#!/usr/bin/env bash
# npm run gradescope:zip -- STAGE [OUT.zip]: the autograder zip to upload to a
# Gradescope programming assignment that grades STAGE (docs/instructors.md,
# "Gradescope"). It holds this checkout's committed course (HEAD, so the zip
# is a commit you can name), closed-book: without solutions/. setup.sh and
# run_autograder go at the zip's root, where Gradescope looks for them.
set -euo pipefail

course=$(cd "$(dirname "$0")/.." && pwd)
stage="${1:?usage: npm run gradescope:zip -- STAGE [OUT.zip]}"
node -e '
  const [stage, file] = process.argv.slice(1)
  const numbers = JSON.parse(require("node:fs").readFileSync(file, "utf8")).stages.map((s) => String(s.number))
  if (!numbers.includes(stage)) { console.error(`no stage ${stage} in this course: ${numbers.join(", ")}`); process.exit(2) }
' "$stage" "$course/course.json"
out=$(realpath -m "${2:-gradescope-stage$stage.zip}")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$course" archive HEAD | tar -x -C "$tmp"
rm -rf "$tmp/solutions"
cp "$tmp/gradescope/setup.sh" "$tmp/gradescope/run_autograder" "$tmp/"
echo "$stage" > "$tmp/gradescope/stage"

rm -f "$out"
# zip where there is one; else Node, which every machine that runs the course has.
if command -v zip > /dev/null; then
  (cd "$tmp" && zip -q -r -X "$out" .)
else
  node "$course/harness/launch.mjs" "$course/scripts/zipFolder.ts" "$tmp" "$out"
fi
echo "$out: stage $stage, course at $(git -C "$course" rev-parse --short HEAD), without solutions/"
