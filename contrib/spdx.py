#!/usr/bin/env python3
#
# Copyright (c) 2026, The mlx5_umr developers
# SPDX-License-Identifier: BSD-3-Clause
#
# The licence line of every source file of the project (LICENSE):
#   contrib/spdx.py [--fix] [TOP]
# lists the files whose first lines lack "SPDX-License-Identifier:
# BSD-3-Clause" (exit 1 if any); --fix heads each with the copyright and
# SPDX lines in its own comment syntax (after a #! line). Sources are found
# by name under TOP (default: the tree this script is in), so it works in a
# release tarball as in a clone; generated and fetched files are skipped.
# Linker version scripts (.map) take C comments.
#
import os
import sys

SPDX = "SPDX-License-Identifier: BSD-3-Clause"
COPYRIGHT = "Copyright (c) 2026, The mlx5_umr developers"
C_LIKE = (".c", ".h", ".cc", ".inl", ".map")
HASH_LIKE = (".sh", ".py", ".am", ".m4", ".ac", ".txt", ".supp", ".in",
             "run")
SKIP_DIRS = {".git", "build", "ucx-src", "ompi-src", "mpich-src", "autom4te.cache",
             "config", ".libs", ".deps", "seeds_layout", "lib"}
GENERATED = {"libtool.m4", "ltoptions.m4", "ltsugar.m4", "ltversion.m4",
             "lt~obsolete.m4", "aclocal.m4", "Makefile.in", "umr_config.h",
             "umr_config.h.in", "CMakeLists.txt"}


def sources(top):
    for root, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and
                         not d.startswith("build") and not d.endswith(".out.d"))
        for f in sorted(files):
            if f in GENERATED or f.endswith(".pc") or f == "Makefile":
                continue
            if f.endswith(C_LIKE) or f.endswith(HASH_LIKE):
                yield os.path.join(root, f)


def has_spdx(path):
    with open(path, errors="replace") as fh:
        head = [next(fh, "") for _ in range(8)]
    return any(SPDX in line for line in head)


def fix(path):
    with open(path) as fh:
        text = fh.read()
    if path.endswith(C_LIKE):
        header = "/*\n * %s\n * %s\n */\n" % (COPYRIGHT, SPDX)
        text = header + text
    else:
        header = "# %s\n# %s\n" % (COPYRIGHT, SPDX)
        if text.startswith("#!"):
            first, rest = text.split("\n", 1)
            text = first + "\n" + header + rest
        elif text.startswith("# -*-"):   # Open MPI help files: mode line
            first, rest = text.split("\n", 1)
            text = first + "\n" + header + rest
        else:
            text = header + text
    with open(path, "w") as fh:
        fh.write(text)


def main(argv):
    do_fix = "--fix" in argv
    args = [a for a in argv if a != "--fix"]
    top = args[0] if args else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..")
    missing = [p for p in sources(top) if not has_spdx(p)]
    for p in missing:
        if do_fix:
            fix(p)
            print("headed: %s" % os.path.relpath(p, top))
        else:
            print("no licence line: %s" % os.path.relpath(p, top))
    if not missing:
        print("every source file has its licence line (%s)" % SPDX)
    return 1 if (missing and not do_fix) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
