#!/usr/bin/env python3
"""List Rust functions longer than a limit (default 150 lines).

Usage: scripts/long-functions.py [--no-tests] [LIMIT] [PATH...]

Default paths: src, crates, tests. CI (.ci/run) runs it with the defaults,
so tests count: a test is read and changed like the rest of the code.

A function's length runs from its `fn` line to its closing brace. Tests
(`#[cfg(test)]` modules and files under tests/) are included unless
--no-tests is given. A survivor may be justified by a comment containing
`long-function:` on the line before its `fn`; such functions are listed
as justified and do not count. Exits 1 when an unjustified function is over
the limit, so CI or a developer can use it as a check.
"""
import re
import sys
from pathlib import Path

FN = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)')


def strip_strings(line):
    # Drop string and char literals and line comments so braces in them do not count.
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split('//', 1)[0]


def functions(path):
    lines = path.read_text(errors='replace').splitlines()
    i = 0
    while i < len(lines):
        m = FN.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        depth = 0
        opened = False
        j = i
        while j < len(lines):
            s = strip_strings(lines[j])
            if not opened and ';' in s and '{' not in s:
                break  # a declaration without a body (trait method)
            for ch in s:
                if ch == '{':
                    depth += 1
                    opened = True
                elif ch == '}':
                    depth -= 1
            if opened and depth <= 0:
                break
            j += 1
        if opened:
            justified = start > 0 and 'long-function:' in lines[start - 1]
            yield m.group(7), start + 1, j - start + 1, justified
        i += 1


def main(argv):
    if '--help' in argv or '-h' in argv:
        print(__doc__)
        return 0
    args = [a for a in argv if not a.startswith('--')]
    no_tests = '--no-tests' in argv
    limit = int(args[0]) if args and args[0].isdigit() else 150
    roots = [Path(a) for a in args[1:]] or [Path('src'), Path('crates'), Path('tests')]
    bad = 0
    for root in roots:
        for f in sorted(root.rglob('*.rs')) if root.is_dir() else [root]:
            if 'target' in f.parts or (no_tests and 'tests' in f.parts):
                continue
            for name, line, n, justified in functions(f):
                if n > limit:
                    tag = 'justified' if justified else 'LONG'
                    print(f'{tag} {f}:{line} {name} {n} lines')
                    bad += 0 if justified else 1
    if bad == 0:
        print(f'no unjustified function over {limit} lines')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
