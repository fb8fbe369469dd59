#!/usr/bin/env python3
"""Draws each crate's module graph from its own `mod` and `use` lines, and
fails when the graph has a circle or, in a layered crate, an import that runs
from a lower layer back up.

A node is a source file (a module); an edge A -> B says that a `use` line of A
names something of module B (`use crate::…`, `use super::…`, `use self::…`;
`mod` lines are ownership, not edges). A name imported through a re-export
counts as an edge to the file that re-exports it, so modules must import from
the module that defines a name. Test modules inside a file (`mod tests {…}`)
are part of their file.

A layered crate's top-level modules are its layers, bottom first (LAYERED;
ARCHITECTURE.md describes them); a file of one layer may import only from its
own layer or the ones below it.

Usage: scripts/module-graph.py [--quiet]   (from any directory)
Prints, per crate, its files, edges, circles and upward imports, and each
circle and upward import found; exits 1 if there is any.
"""

import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
# Layered crates: their top-level modules, one per layer, bottom first.
LAYERED = {
    "golem-mcp": [
        "wire", "error", "transports", "session", "features", "server_requests", "client_config",
        "bridge", "config", "serve",
    ],
}

MOD_LINE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)
USE_START = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+", re.M)


def strip_comments(text):
    """The text without // and /* */ comments (string contents are kept;
    they never hold `use` lines at the start of a line here)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


INLINE_MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+[a-z_][a-z0-9_]*\s*\{", re.M)


def without_inline_modules(text):
    """The text without inline `mod name { … }` blocks (the tests of a file:
    their `use super::*` is the file itself)."""
    while True:
        match = INLINE_MOD.search(text)
        if not match:
            return text
        depth, index = 1, match.end()
        while depth and index < len(text):
            depth += {"{": 1, "}": -1}.get(text[index], 0)
            index += 1
        text = text[:match.start()] + text[index:]


def use_trees(text):
    """The `use` declarations of a file, each as its text after `use`."""
    for match in USE_START.finditer(text):
        end = text.index(";", match.end())
        yield text[match.end():end]


def expand(tree):
    """`a::{b, c::{d, e}}` -> [a::b, a::c::d, a::c::e] (aliases dropped)."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+\w+", "", tree))
    brace = tree.find("{")
    if brace < 0:
        return [tree]
    prefix, body = tree[:brace], tree[brace + 1:tree.rindex("}")]
    parts, depth, start = [], 0, 0
    for index, char in enumerate(body):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(body[start:index])
            start = index + 1
    parts.append(body[start:])
    paths = []
    for part in filter(None, parts):
        paths.extend(prefix + sub for sub in expand(part))
    return paths


class Crate:
    def __init__(self, name, src):
        self.name, self.src = name, src
        self.modules = {}  # module path (tuple) -> file
        self.children = {}  # module path -> {child name}
        roots = [os.path.join(src, name) for name in ("lib.rs", "main.rs")]
        bin_dir = os.path.join(src, "bin")
        if os.path.isdir(bin_dir):
            roots += [os.path.join(bin_dir, f) for f in sorted(os.listdir(bin_dir)) if f.endswith(".rs")]
        self.roots = [root for root in roots if os.path.isfile(root)]
        for root in self.roots:
            self.load((os.path.relpath(root, src),), root)

    def load(self, path, file):
        self.modules[path] = file
        self.children[path] = set()
        text = strip_comments(open(file, encoding="utf-8").read())
        base = os.path.dirname(file)
        if os.path.basename(file) not in ("lib.rs", "main.rs", "mod.rs") and os.path.dirname(file) != os.path.join(self.src, "bin"):
            base = os.path.join(base, os.path.basename(file)[:-3])
        for name in MOD_LINE.findall(text):
            for candidate in (os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")):
                if os.path.isfile(candidate):
                    self.children[path].add(name)
                    self.load(path + (name,), candidate)
                    break

    def resolve(self, module, path):
        """The file of the deepest module that `path` (seen from `module`)
        names, or None for another crate's path."""
        segments = path.split("::")
        if segments[0] == "crate":
            current, segments = module[:1], segments[1:]
        elif segments[0] in ("super", "self"):
            current = module
            while segments and segments[0] in ("super", "self"):
                if segments.pop(0) == "super":
                    current = current[:-1]
        elif segments[0] in self.children.get(module, ()):
            current = module  # a path relative to this module (`use child::…`)
        else:
            return None  # another crate
        for segment in segments:
            if segment in self.children.get(current, ()):
                current = current + (segment,)
            else:
                break
        return self.modules.get(current)

    def edges(self):
        found = set()
        for module, file in self.modules.items():
            text = without_inline_modules(strip_comments(open(file, encoding="utf-8").read()))
            for tree in use_trees(text):
                for path in expand(tree):
                    target = self.resolve(module, path)
                    if target and target != file:
                        found.add((file, target))
        return found


def circles(nodes, edges):
    """Strongly connected components with more than one file (Tarjan)."""
    graph = {node: [] for node in nodes}
    for a, b in edges:
        graph[a].append(b)
    index, low, stack, on_stack, result, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    sys.setrecursionlimit(10000)
    for node in graph:
        if node not in index:
            visit(node)
    return result


def upward(crate, edges):
    """Imports from a layer to one above it."""
    root = ("lib.rs",)
    order = LAYERED[crate.name]
    missing = sorted(crate.children[root] - set(order))
    if missing:
        sys.exit(f"{crate.name}: top-level modules {missing} are in no layer; add them to LAYERED")
    layer_of = {}
    for module, file in crate.modules.items():
        if module[:1] == root and len(module) > 1:
            layer_of[file] = order.index(module[1])
    return sorted((a, b) for a, b in edges if a in layer_of and b in layer_of and layer_of[b] > layer_of[a])


def main():
    quiet = "--quiet" in sys.argv
    failed = False
    crates_dir = os.path.join(ROOT, "crates")
    for name in sorted(os.listdir(crates_dir)):
        src = os.path.join(crates_dir, name, "src")
        if not os.path.isdir(src):
            continue
        crate = Crate(name, src)
        edges = crate.edges()
        found = circles(list(crate.modules.values()), edges)
        up = upward(crate, edges) if name in LAYERED else []
        rel = lambda file: os.path.relpath(file, ROOT)
        if not quiet or found or up:
            layered = f", {len(up)} upward imports" if name in LAYERED else ""
            print(f"{name}: {len(crate.modules)} files, {len(edges)} imports, {len(found)} circles{layered}")
        for component in found:
            failed = True
            print("  circle: " + " <-> ".join(rel(file) for file in component))
            for a, b in sorted(edges):
                if a in component and b in component:
                    print(f"    {rel(a)} -> {rel(b)}")
        for a, b in up:
            failed = True
            print(f"  upward: {rel(a)} -> {rel(b)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
