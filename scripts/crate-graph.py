#!/usr/bin/env python3
"""Print the dependency diagram between the workspace's storlab crates,
read from the Cargo.toml files (so it cannot drift from the code).

Usage:
  scripts/crate-graph.py [--format mermaid|text]   print the diagram
  scripts/crate-graph.py --check FILE               exit 1 when FILE's block differs
  scripts/crate-graph.py --write FILE               replace FILE's block

FILE's block is the text between the lines `<!-- crate-graph:begin -->` and
`<!-- crate-graph:end -->` (docs/ARCHITECTURE.md): the mermaid diagram in a
fenced block, then the same edges as text. Edges are [dependencies] (optional
ones too, marked "optional"); dev-dependencies are left out, except that the
crates testing with storlab-testkit are listed under the diagram.
Run from anywhere; paths are relative to the repository root.
"""
import glob
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- crate-graph:begin -->"
END = "<!-- crate-graph:end -->"


def manifests():
    """(package name, manifest) of every workspace member, in a fixed order."""
    ws = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]
    out = []
    for pattern in ws["members"]:
        for d in sorted(glob.glob(str(ROOT / pattern))):
            m = Path(d) / "Cargo.toml"
            if m.is_file():
                t = tomllib.loads(m.read_text())
                if "package" in t:
                    out.append((t["package"]["name"], t))
    return out


def short(name):
    return name.removeprefix("storlab-") if name != "storlab" else "storlab (CLI)"


def edges():
    """{crate: [(dependency, optional)]}, storlab crates only; dev users of testkit."""
    ms = manifests()
    names = {n for n, _ in ms}
    graph, testkit_users = {}, []
    for name, t in ms:
        deps = []
        for dep, spec in t.get("dependencies", {}).items():
            real = spec.get("package", dep) if isinstance(spec, dict) else dep
            if real in names:
                optional = isinstance(spec, dict) and spec.get("optional", False)
                deps.append((real, optional))
        graph[name] = sorted(deps)
        if "storlab-testkit" in t.get("dev-dependencies", {}):
            testkit_users.append(name)
    return graph, sorted(testkit_users)


def node_id(name):
    return name.replace("-", "_")


def mermaid(graph):
    lines = ["```mermaid", "flowchart TD"]
    for name in sorted(graph):
        lines.append(f'    {node_id(name)}["{short(name)}"]')
    for name in sorted(graph):
        for dep, optional in graph[name]:
            arrow = "-.->" if optional else "-->"
            lines.append(f"    {node_id(name)} {arrow} {node_id(dep)}")
    lines.append("```")
    return lines


def text(graph, testkit_users):
    lines = []
    for name in sorted(graph):
        deps = ", ".join(
            short(d) + (" (optional)" if o else "") for d, o in graph[name]
        )
        lines.append(f"- `{short(name)}` → {deps or 'no storlab crate'}")
    if testkit_users:
        users = ", ".join(f"`{short(u)}`" for u in testkit_users)
        lines.append(f"- dev-dependency `testkit` (tests only): {users}")
    return lines


def block():
    graph, users = edges()
    return "\n".join(mermaid(graph) + [""] + text(graph, users)) + "\n"


def split(doc, path):
    if doc.count(BEGIN) != 1 or doc.count(END) != 1 or doc.index(BEGIN) > doc.index(END):
        sys.exit(f"{path}: needs exactly one {BEGIN} ... {END} block")
    head, rest = doc.split(BEGIN + "\n", 1)
    body, tail = rest.split(END, 1)
    return head, body, tail


def main(argv):
    if len(argv) == 2 and argv[0] in ("--check", "--write"):
        path = Path(argv[1])
        doc = path.read_text()
        head, body, tail = split(doc, path)
        want = block()
        if argv[0] == "--write":
            path.write_text(head + BEGIN + "\n" + want + END + tail)
            return 0
        if body != want:
            print(f"{path}: the crate diagram differs from the manifests; "
                  f"run scripts/crate-graph.py --write {path}", file=sys.stderr)
            return 1
        print(f"{path}: the crate diagram matches the manifests")
        return 0
    fmt = "mermaid"
    if argv[:1] == ["--format"] and len(argv) == 2 and argv[1] in ("mermaid", "text"):
        fmt = argv[1]
    elif argv:
        print(__doc__, file=sys.stderr)
        return 2
    graph, users = edges()
    print("\n".join(mermaid(graph) if fmt == "mermaid" else text(graph, users)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
