#!/usr/bin/env python3
"""Classroom 50's autograder for one stage of the idempotency-key lab.

Classroom 50's runner (runner.py) runs this once per submission, in the
learner's checkout, and reads the result.json it leaves there
(`classroom50/result/v1`). It grades the learner's stage folder on a pinned,
closed-book copy of the course: never on the submission's own grader, bank
or checks, which a learner could have edited.

Beside it in the assignment's bundle (CLASSROOM/autograders/ASSIGNMENT/),
idem-lab.json says which course and which stage:

    {"repository": "https://github.com/OUR-ORG/idempotency-key-lab.git",
     "commit": "<the 40-hex commit to grade with>", "stage": 3}

or, for a runner that holds the course already (a self-hosted runner, the
tests), {"path": "/srv/idempotency-key-lab", "stage": 3}: that folder is
copied, and its installed node_modules linked rather than copied.
docs/instructors.md ("Classroom 50") says how to set it up.

Python 3 standard library only. Exit 0 with a result.json for every grade,
the failing ones included; exit 1 when the grader itself could not run, so
that Classroom 50 records an error, not a score of 0.
"""

import datetime
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

BUNDLE = pathlib.Path(os.environ.get("CLASSROOM50_BUNDLE_DIR") or pathlib.Path(__file__).resolve().parent)
RESULT = "result.json"
# Never part of the copy a learner's code is graded on: the reference answers
# (closed-book), and what a copy installs or builds for itself.
LEFT_OUT = ("solutions", ".git", "node_modules", ".lab")


def course_copy(config: dict, into: pathlib.Path) -> pathlib.Path:
    """The pinned course, closed-book, installed: a clone at the commit, or a copy of a local folder."""
    course = into / "course"
    if "path" in config:
        source = pathlib.Path(config["path"])
        shutil.copytree(source, course, symlinks=True, ignore=shutil.ignore_patterns(*LEFT_OUT))
        if (source / "node_modules").is_dir():
            (course / "node_modules").symlink_to((source / "node_modules").resolve())
    else:
        subprocess.run(["git", "clone", "--quiet", config["repository"], str(course)], check=True)
        subprocess.run(["git", "-C", str(course), "checkout", "--quiet", "--detach", config["commit"]], check=True)
        for name in LEFT_OUT[:2]:
            shutil.rmtree(course / name, ignore_errors=True)
    if not (course / "node_modules").exists():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=course, check=True)
    return course


def identity() -> dict:
    """The fields only the runner knows (it stamps owner, assignment_type and datetime itself)."""
    env = os.environ
    return {
        "classroom": env.get("CLASSROOM", ""),
        "assignment": env.get("ASSIGNMENT", ""),
        "submission": env.get("SUBMISSION_TAG", ""),
        "commit": env.get("COMMIT_URL", ""),
        "release": env.get("RELEASE_URL", ""),
        "review": env.get("REVIEW_URL") or env.get("COMMIT_URL", ""),
        "datetime": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def main() -> int:
    config = json.loads((BUNDLE / "idem-lab.json").read_text(encoding="utf-8"))
    workspace = pathlib.Path.cwd()
    result = workspace / RESULT
    result.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="idem-lab-") as tmp:
        course = course_copy(config, pathlib.Path(tmp))
        # The grader's own report goes to the Actions log; result.json is the
        # same grade in Classroom 50's shape. English: --json is in every language.
        # --format: without the bubblewrap sandbox (or root, to run the code as
        # nobody) the grader refuses, exit 2, unless the runner's environment
        # has IDEM_LAB_ALLOW_UNCONFINED=1 (docs/instructors.md, "Untrusted code").
        grade = subprocess.run(
            ["npm", "run", "--silent", "grade", "--", str(config["stage"]), "--dir", str(workspace),
             "--lang", "en", "--format", "classroom50", "--json", str(result)],
            cwd=course,
            check=False,
        )
    # 0: every check passed; 1: some failed. Both are a grade. 2: the grader failed.
    if grade.returncode not in (0, 1) or not result.is_file():
        print(f"autograder: the grader itself failed (exit {grade.returncode}): no score recorded", file=sys.stderr)
        return 1
    document = json.loads(result.read_text(encoding="utf-8"))
    result.write_text(json.dumps({**document, **identity()}, indent=2) + "\n", encoding="utf-8")
    print(f"autograder: {document['score']}/{document['max-score']} written to {RESULT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
