#!/usr/bin/env python3
"""Runs every command block of a user guide, in order, and checks what it promises.

usage: run_guide.py GUIDE PERFDB SRC_DIR [--same-as OTHER_GUIDE]

The blocks are the ```sh fences of GUIDE. They run in one bash process (so
P and DB set by one block serve the next) in a scratch directory laid out as
the repository root: examples/, tests/ and data/ link to SRC_DIR's, build/bin
to the directory of PERFDB, and build/work is the scratch's own. Each block's
stdout and stderr go to files; bash's ERR trap records every command that
exits non-zero.

A block fails when
  - a command in it exits non-zero, unless an annotation allows that exit;
  - a line of the block that is only a comment (`# text`, the output the guide
    shows) is not found in the block's stdout+stderr ("..." and "…" match any
    text);
  - a check annotation fails.

Annotations are HTML comments right after a block's closing fence (they do
not show when the guide is rendered):
  <!-- guide-test: check SHELL -->        runs after the block, in the same
                                           shell; $OUT and $ERR name the
                                           block's stdout and stderr files
  <!-- guide-test: exit N TEXT -->         a command containing TEXT may exit N
  <!-- guide-test: skip-lines PREFIX WHY -->  lines starting with PREFIX are
                                           not run (WHY says where they are tested)
  <!-- guide-test: skip WHY -->            the block is not run (WHY says where
                                           it is tested)

A block without a check annotation fails too: each block must assert the
effect its text promises, not only exit 0.

--same-as OTHER: GUIDE (a translation) must hold OTHER's blocks, command for
command once comments are dropped, with the same annotations; nothing runs.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ANNOT = re.compile(r"^<!-- guide-test: (check|exit|skip-lines|skip) ?(.*?) -->$")


def blocks(path):
    """[(first line number, [lines], [(kind, arg)])] of the ```sh fences."""
    out = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            start = i + 2
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            notes = []
            i += 1
            while i < len(lines) and lines[i].startswith("<!-- guide-test:"):
                m = ANNOT.match(lines[i])
                if not m:
                    sys.exit("%s:%d: malformed guide-test annotation" % (path, i + 1))
                notes.append((m.group(1), m.group(2)))
                i += 1
            out.append((start, body, notes))
        else:
            i += 1
    return out


def commands(body):
    """The block's lines without comment-only lines and trailing comments."""
    keep = []
    for line in body:
        if line.lstrip().startswith("#"):
            continue
        keep.append(re.sub(r"\s+#\s.*$", "", line).rstrip())
    return keep


def same_as(guide, other):
    a, b = blocks(guide), blocks(other)
    bad = 0
    if len(a) != len(b):
        print("%s has %d command blocks, %s has %d" % (guide, len(a), other, len(b)))
        return 1
    for (la, ba, na), (lb, bb, nb) in zip(a, b):
        if commands(ba) != commands(bb):
            print("%s:%d: the block's commands differ from %s:%d" % (guide, la, other, lb))
            bad += 1
        if na != nb:
            print("%s:%d: the block's guide-test annotations differ from %s:%d" % (guide, la, other, lb))
            bad += 1
    print("%d blocks, %d differ" % (len(a), bad))
    return 1 if bad else 0


def shown_output(body):
    """Comment-only lines after the first command: the output the guide shows."""
    shown, seen_cmd = [], False
    for line in body:
        s = line.strip()
        if s.startswith("#") and seen_cmd:
            shown.append(s[1:].strip())
        elif s:
            seen_cmd = True
    return shown


def pattern(text):
    pieces = re.split(r"\.\.\.|…", text)
    return re.compile(".*".join(re.escape(p.strip()) for p in pieces), re.S)


def main(argv):
    if len(argv) >= 3 and argv[1] == "--same-as":
        return same_as(argv[0], argv[2])
    if len(argv) != 3:
        sys.exit(__doc__)
    guide, perfdb, src = argv
    found = blocks(guide)
    work = tempfile.mkdtemp(prefix="perfdb-guide.")
    try:
        for d in ("examples", "tests", "data"):
            os.symlink(os.path.join(src, d), os.path.join(work, d))
        os.makedirs(os.path.join(work, "build"))
        os.symlink(os.path.dirname(os.path.abspath(perfdb)), os.path.join(work, "build", "bin"))
        g = os.path.join(work, ".guide")
        os.makedirs(g)
        script = ["set -E -o pipefail", 'cd "%s"' % work,
                  "trap 'printf \"%s\\t%s\\n\" \"$?\" \"$BASH_COMMAND\" >>\"$__x\"' ERR"]
        plan = []
        for n, (line, body, notes) in enumerate(found):
            kinds = [k for k, _ in notes]
            skip = [a for k, a in notes if k == "skip"]
            if skip:
                plan.append((n, line, body, notes, "skipped: " + skip[0]))
                continue
            if "check" not in kinds:
                plan.append((n, line, body, notes, "no check annotation: say what this block must do"))
                continue
            prefixes = [a.split(" ", 1)[0] for k, a in notes if k == "skip-lines"]
            run = [l for l in body if not any(l.lstrip().startswith(p) for p in prefixes)]
            out, err, ex = ("%s/out.%d" % (g, n), "%s/err.%d" % (g, n), "%s/exit.%d" % (g, n))
            script.append('__x="%s"; : >"$__x"' % ex)
            script.append("{\n%s\n} >'%s' 2>'%s'" % ("\n".join(run), out, err))
            script.append("__x=/dev/null")
            for k, (kind, arg) in enumerate(notes):
                if kind == "check":
                    script.append("if ! (OUT='%s' ERR='%s'; %s) >'%s/check.%d.%d' 2>&1; then echo %d >>'%s/checkfail.%d'; fi"
                                  % (out, err, arg, g, n, k, k, g, n))
            plan.append((n, line, body, notes, None))
        open(os.path.join(g, "script.sh"), "w").write("\n".join(script) + "\n")
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   PERFDB_DATA_ROOT=os.path.join(work, "no-such-root"))
        subprocess.run(["bash", os.path.join(g, "script.sh")], env=env, cwd=work)
        failures = 0
        for n, line, body, notes, why in plan:
            where = "%s:%d" % (guide, line)
            if why and why.startswith("skipped"):
                print("%s: %s" % (where, why))
                continue
            if why:
                print("%s: FAIL: %s" % (where, why))
                failures += 1
                continue
            problems = []
            allowed = [(int(a.split(" ", 1)[0]), a.split(" ", 1)[1]) for k, a in notes if k == "exit"]
            for rec in open("%s/exit.%d" % (g, n)).read().splitlines():
                rc, cmd = rec.split("\t", 1)
                if not any(int(rc) == r and t in cmd for r, t in allowed):
                    problems.append("`%s` exited %s" % (cmd, rc))
            text = open("%s/out.%d" % (g, n)).read() + open("%s/err.%d" % (g, n)).read()
            for shown in shown_output(body):
                if not pattern(shown).search(text):
                    problems.append("the output the guide shows is not printed: %s" % shown)
            cf = "%s/checkfail.%d" % (g, n)
            if os.path.exists(cf):
                for k in open(cf).read().split():
                    problems.append("check failed: %s (%s)" % (notes[int(k)][1],
                                    open("%s/check.%d.%s" % (g, n, k)).read().strip()[-300:]))
            if problems:
                failures += 1
                print("%s: FAIL" % where)
                for p in problems:
                    print("    " + p)
                print("    --- stdout (end):\n" + "".join("    " + l + "\n" for l in open("%s/out.%d" % (g, n)).read().splitlines()[-8:]))
                print("    --- stderr (end):\n" + "".join("    " + l + "\n" for l in open("%s/err.%d" % (g, n)).read().splitlines()[-8:]))
            else:
                print("%s: ok" % where)
        print("%d blocks, %d failed" % (len(found), failures))
        return 1 if failures else 0
    finally:
        if os.environ.get("GUIDE_KEEP"):
            print("kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
