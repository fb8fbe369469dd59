#!/usr/bin/env python3
"""Checks that the code map, ARCHITECTURE.md, names only things that exist,
so that it cannot drift silently: every source path it names in backticks
is a file or folder of the repository, and every type and `Type::member`
it names is defined in the workspace's Rust sources.

What a backticked token is (`classify`; --self-test shows examples):
- A path: it ends with a source extension (EXTENSIONS), or has a `/` and
  either ends with `/` (a folder) or starts with a folder at the repository
  root or in a crate (`crates/`, `docs/`, `src/`, `tests/`, ...). Other
  tokens with a `/` are MCP methods (`tools/call`), MIME types or packages;
  URLs (`://`), routes (`/mcp`), flags (`--x`) and tokens with spaces are not
  paths either. `…` or `*` in a path is a wildcard.
- A `Type::member`: a Rust path (`::`) whose second-to-last segment is
  capitalized, after dropping call arguments and generics
  (`golem_mcp::Client::connect()` -> `Client::connect`,
  `Client::as_tools::<Deps>` -> `Client::as_tools`). A path whose
  second-to-last segment is lowercase (`golem_mcp::auth`, `jsonrpc::route`)
  names a module's item and is not checked.
- A type: one CamelCase identifier, generics dropped (`McpToolset`,
  `Tool<Deps>` -> `Tool`). It must be a struct, enum, trait, type alias
  or union of the workspace, so that a renamed type fails the check; a
  name of Rust's prelude or a one-word HTTP header (NOT_OURS: `String`,
  `Err`, `Authorization`, ...) is skipped. Name another crate's type by
  its path (`bytes::Bytes`: a module path, not checked) and an enum's
  variant with its enum (`TransportError::ProcessExited`). All-caps
  words (`GET`, `MAX_PAGES`) and hyphenated headers are not types.

Where a relative path is looked for (`Context.find`), in order: the
folders of the enclosing list item, the folder of the `###` heading, the
current crate's `src/`, the crate's root, the repository root.
- The current crate is set by a `## Code map of `name`` heading (a crate
  is named by its folder under crates/ or by its package name, read from
  its Cargo.toml: `golem` and `golem-agent` are both crates/golem). Outside
  a code map it is the crate of the last path that named one
  (`crates/<dir>/…`, `bench/…`); before any, every crate is tried.
- A folder label, a backticked folder followed by a colon, gives its
  folder to its heading's section (`### `session/`: …`) or to its list
  item and the items nested in it (`- `stdio/`: …`, `tests/support/`: …`
  within an item).
- A bare file name in an item with a folder may also be in a sibling of
  that folder: under `sse/`, "the streamable transport's `config.rs`" is
  `http/config.rs`.

When a `Type::member` is checked (`RustIndex`): `Type` must be a struct,
enum, trait, type alias or union of the workspace (sources under
crates/*/{src,tests,examples,testing} and bench/{src,benches}, never
target/); a type the workspace does not define (`Arc::new_cyclic`) is
another crate's and is skipped. `member` must then be a `fn`, `const` or
associated type of an `impl` block of `Type` or of a workspace trait it
implements, an item of the trait `Type`, a variant of the enum `Type` or a
field of the struct `Type`. When the current crate defines a `Type`, only
its own counts; otherwise every crate's does (the workspace has several
`Error`s, `Plan`s and `Servers`).

Usage: scripts/architecture-check.py [--verbose] [--self-test]   (from any directory)
Exits 1 with one line per name that is not found, 0 with a one-line
summary. --verbose also lists the tokens that look like paths, types or
Rust paths but were not checked, and why. --self-test runs the examples of `classify`
and of the Rust index instead.
"""

import glob
import os
import re
import sys
import tomllib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DOC = os.path.join(ROOT, "ARCHITECTURE.md")
EXTENSIONS = (".rs", ".py", ".sh", ".md", ".toml", ".yml", ".json")
# Bare CamelCase words that are not the workspace's types: Rust's prelude
# and std, and one-word HTTP header names.
NOT_OURS = {
    "String", "Vec", "Option", "Some", "None", "Result", "Ok", "Err", "Box", "Arc", "Rc",
    "Debug", "Display", "Default", "Clone", "Send", "Sync", "Future", "Drop", "Iterator",
    "Authorization", "Accept", "Host", "Location", "Origin",
}
# The folders of a crate whose Rust sources are indexed.
RUST_FOLDERS = ("src", "tests", "examples", "testing", "benches")


# ---------------------------------------------------------------- the doc


def classify(token, folders):
    """("path", path), ("type", Type), ("item", Type, member), ("skip",
    why) or None (a plain word, not worth listing). `folders` are the names a relative path
    may start with (the folders at the repository root and in the crates)."""
    text = " ".join(token.split())
    if "://" in text:
        return ("skip", "a URL")
    if "::" in text:
        return classify_rust(text)
    if " " in text:
        return ("skip", "prose or code, not a path") if "/" in text else None
    if text.startswith("-"):
        return ("skip", "a flag") if "/" in text else None
    if text.startswith("/"):
        return ("skip", "a route")
    if text.endswith(EXTENSIONS) and re.fullmatch(r"[\w.\-/…*]+", text):
        return ("path", text)
    bare = re.fullmatch(r"([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)(?:<[\w<>, ]*>)?", text)
    if bare:
        return ("type", bare.group(1))
    if "/" in text:
        if text.endswith("/") or text.split("/")[0] in folders:
            return ("path", text)
        return ("skip", "no extension, no trailing /, no known first folder: an MCP method, MIME type or package")
    return None


def classify_rust(text):
    """The `Type::member` a Rust path names, if any (see `classify`)."""
    path = re.sub(r"\s+", "", text).split("(")[0]
    path = path.split("::<")[0]
    while re.search(r"<[^<>]*>", path):
        path = re.sub(r"<[^<>]*>", "", path)
    segments = path.split("::")
    if not all(re.fullmatch(r"[A-Za-z_]\w*", s) for s in segments):
        return ("skip", "not a Rust path")
    if len(segments) < 2:
        return None
    owner, member = segments[-2], segments[-1]
    if owner == "Self":
        return ("skip", "a path through `Self`")
    if not owner[0].isupper():
        return ("skip", "a module path (second-to-last segment lowercase)")
    return ("item", owner, member)


def without_fences(text):
    """The text with fenced code blocks blanked (line numbers kept)."""
    return re.sub(r"^```.*?^```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)


def spans(text):
    """Every inline code span as (line number, token, text right after the
    closing backtick), in order; a span may run over a line break."""
    found = []
    for match in re.finditer(r"`([^`\n]+(?:\n[^`\n]+)*?)`", text):
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, match.group(1), text[match.end():match.end() + 1]))
    return found


class Context:
    """Where the doc is: the current crate, the `###` heading's folder and
    the open list items' folders; resolves a relative path from there."""

    def __init__(self, crates):
        self.crates = crates  # name (folder or package) -> crate folder
        self.crate = None
        self.code_map = False
        self.heading = None
        self.items = []  # [indent, [folder, innermost first]], outermost item first

    def line(self, text):
        """Update the context for a new line of the doc; returns a problem
        (a code map of an unknown crate) or None."""
        heading = re.match(r"(#{2,3})\s+(.*)", text)
        if heading:
            self.items, self.heading = [], None
            title = heading.group(2)
            if heading.group(1) == "##":
                code_map = re.match(r"Code map of `([^`]+)`", title)
                self.code_map = bool(code_map)
                self.crate = self.crates.get(code_map.group(1)) if code_map else None
                if code_map and not self.crate:
                    return f"`{code_map.group(1)}`: a code map of no crate of the workspace"
            else:
                label = re.match(r"`([^`]+/)`:", title)
                if label:
                    self.heading = self.find(label.group(1), items=False)
                    if not self.heading:
                        return f"`{label.group(1)}`: heading names a folder that does not exist"
            return None
        if not text.strip():
            return None
        indent = len(text) - len(text.lstrip())
        while self.items and indent <= self.items[-1][0]:
            self.items.pop()
        if re.match(r"\s*[-*] ", text):
            self.items.append([indent, list(self.items[-1][1]) if self.items else []])
        return None

    def folders(self, items=True):
        """The folders a relative path may be relative to, innermost first."""
        found = list(self.items[-1][1]) if items and self.items else []
        if self.heading:
            found.append(self.heading)
        crates = [self.crate] if self.crate else sorted(set(self.crates.values()))
        for crate in crates:
            found += [os.path.join(crate, "src"), crate]
        return found + [ROOT]

    def where(self):
        """The folders `find` looks in, as a problem line shows them."""
        folders = list(self.items[-1][1]) if self.items else []
        folders += [self.heading] if self.heading else []
        folders += [os.path.join(self.crate, "src"), self.crate] if self.crate else []
        shown = [os.path.relpath(folder, ROOT) for folder in folders]
        shown += [] if self.crate else ["every crate's src/ and root"]
        return ", ".join(shown + ["the repository root"])

    def find(self, path, items=True):
        """The file or folder `path` names from here, or None."""
        pattern = path.replace("…", "*")
        candidates = [os.path.join(folder, pattern) for folder in self.folders(items)]
        if "/" not in path.rstrip("/") and items and self.items:
            # A bare name may be in a sibling of the item's folder.
            candidates += [os.path.join(os.path.dirname(f), "*", pattern) for f in self.items[-1][1]]
        for candidate in candidates:
            if "*" in candidate:
                matches = sorted(glob.glob(candidate))
                if matches:
                    return os.path.normpath(matches[0])
            elif os.path.exists(candidate):
                return os.path.normpath(candidate)
        return None

    def named(self, path, found, label):
        """Note what a found path changes: a folder label adds its folder to
        its item's; outside a code map, a path that names a crate's folder
        (`crates/<dir>/…`, `bench/…`) makes that crate current."""
        if label and self.items and os.path.isdir(found):
            self.items[-1][1].insert(0, found)
        if not self.code_map:
            for crate in set(self.crates.values()):
                name = os.path.relpath(crate, ROOT)
                if path.rstrip("/") == name or path.startswith(name + "/"):
                    self.crate = crate


# ---------------------------------------------------------------- the Rust sources


def workspace_crates():
    """Each crate of the workspace by folder name and by package name ->
    its folder (from the root Cargo.toml's members and each Cargo.toml)."""
    with open(os.path.join(ROOT, "Cargo.toml"), "rb") as file:
        members = tomllib.load(file)["workspace"]["members"]
    by_package, by_folder = {}, {}
    for pattern in members:
        for folder in sorted(glob.glob(os.path.join(ROOT, pattern))):
            manifest = os.path.join(folder, "Cargo.toml")
            if not os.path.isfile(manifest):
                continue
            with open(manifest, "rb") as file:
                package = tomllib.load(file).get("package", {}).get("name")
            by_folder[os.path.basename(folder)] = folder
            if package:
                by_package[package] = folder
    return {**by_package, **by_folder}  # a folder name wins a clash


def rust_files(crates):
    """(crate folder, file) for the Rust sources of every crate's indexed
    folders, target/ excluded."""
    for crate in sorted(set(crates.values())):
        for name in RUST_FOLDERS:
            for parent, dirs, files in os.walk(os.path.join(crate, name)):
                dirs[:] = sorted(d for d in dirs if d != "target")
                for file in sorted(files):
                    if file.endswith(".rs"):
                        yield crate, os.path.join(parent, file)


LEXEMES = re.compile(
    r"""//[^\n]*|/\*.*?\*/|b?r(\#*)".*?"\1|b?"(?:\\.|[^"\\])*"|b?'(?:\\.|[^\\'\n])'""",
    re.S,
)


def strip_rust(text):
    """The text with comments, strings and character literals blanked, so
    that braces and keywords left are code."""
    def blank(match):
        lexeme = match.group(0)
        return '""' if lexeme[0] != "/" else " " + "\n" * lexeme.count("\n")
    return LEXEMES.sub(blank, text)


def block(text, start):
    """The body of the `{` block opening at `start`, nested blocks,
    parentheses and brackets emptied (their items are not the block's)."""
    depth, index, body = 0, start, []
    while index < len(text):
        char = text[index]
        if char in "{([":
            depth += 1
            if depth == 1 or depth == 2:
                body.append(char)
        elif char in "})]":
            depth -= 1
            if depth <= 1:
                body.append(char)
            if depth == 0:
                return "".join(body[1:-1])
        elif depth == 1:
            body.append(char)
        index += 1
    return "".join(body[1:])


def last_type(header):
    """`crate::x::Foo<T>` / `&mut Foo` -> `Foo`."""
    header = header.replace("->", "  ")
    while re.search(r"<[^<>]*>", header):
        header = re.sub(r"<[^<>]*>", "", header)
    names = re.findall(r"[A-Za-z_]\w*", header)
    names = [n for n in names if n not in ("dyn", "mut", "const", "impl")]
    return names[-1] if names else None


class RustIndex:
    """The workspace's type names, where they are defined and their
    members, per crate."""

    def __init__(self, files):
        self.defined = {}  # type -> {crate folder: [file]}
        self.members = {}  # (crate folder, type) -> {member}
        self.traits_of = {}  # (crate folder, type) -> {trait it implements}
        for crate, file in files:
            with open(file, encoding="utf-8") as handle:
                self.read(crate, file, strip_rust(handle.read()))

    def read(self, crate, file, text):
        """Index one stripped source file of `crate`."""
        kinds = r"\b(struct|enum|trait|type|union)\s+([A-Za-z_]\w*)"
        for match in re.finditer(kinds, text):
            kind, name = match.groups()
            self.defined.setdefault(name, {}).setdefault(crate, []).append(file)
            members = self.members.setdefault((crate, name), set())
            if kind == "type":
                continue
            end = re.compile(r"[{;]").search(text, match.end())
            if not end or text[end.start()] == ";":
                continue
            body = block(text, end.start())
            if kind == "enum":
                members.update(re.findall(r"(?:^|,)\s*(?:#\[\]\s*)*([A-Z]\w*)", body))
            elif kind in ("struct", "union"):
                field = r"(?:^|,)\s*(?:#\[\]\s*)*(?:pub(?:\(\))?\s+)?([a-z_]\w*)\s*:(?!:)"
                members.update(re.findall(field, body))
            else:
                members.update(item_names(body))
        for match in re.finditer(r"^[ \t]*(?:unsafe\s+)?impl\b", text, re.M):
            opening = text.find("{", match.end())
            if opening < 0:
                continue
            header = text[match.end():opening]
            if header.lstrip().startswith("<"):
                header = header.lstrip()
                depth = 0
                for index, char in enumerate(header.replace("->", "  ")):
                    depth += {"<": 1, ">": -1}.get(char, 0)
                    if depth == 0:
                        header = header[index + 1:]
                        break
            header = re.split(r"\swhere\s", header)[0]
            parts = re.split(r"\sfor\s", header)
            trait, target = (parts[-2], parts[-1]) if len(parts) > 1 else ("", header)
            name = last_type(target)
            if not name:
                continue
            self.members.setdefault((crate, name), set()).update(item_names(block(text, opening)))
            if trait.strip():
                self.traits_of.setdefault((crate, name), set()).add(last_type(trait))

    def files(self, owner, crate=None):
        """The files that define `owner`: the current crate's if it defines
        one, else every crate's."""
        defined = self.defined.get(owner, {})
        crates = [crate] if crate in defined else sorted(defined)
        return sorted(file for c in crates for file in defined[c])

    def has(self, owner, member, crate=None):
        """Whether `owner::member` is defined, through the workspace traits
        it implements too. When the current crate defines a type `owner`,
        only its definition counts; else every crate's does."""
        defined = self.defined.get(owner, {})
        seen, todo = set(), [(c, owner) for c in ([crate] if crate in defined else defined)]
        while todo:
            key = todo.pop()
            if key in seen:
                continue
            seen.add(key)
            if member in self.members.get(key, ()):
                return True
            for trait in self.traits_of.get(key, ()):
                todo += [(c, trait) for c in self.defined.get(trait, {})]
        return False


def item_names(body):
    """The `fn`, `const` and `type` names of an impl or trait body."""
    return set(re.findall(r"\b(?:fn|const|type)\s+([A-Za-z_]\w*)", body))


# ---------------------------------------------------------------- the check


def known_folders(crates):
    """The folder names a relative path may start with: the repository
    root's and every crate's."""
    names = set()
    for folder in [ROOT] + sorted(set(crates.values())):
        names.update(n for n in os.listdir(folder) if os.path.isdir(os.path.join(folder, n)) and not n.startswith("."))
    return names - {"target"}


def check(text, crates, index):
    """(problems, skipped, counts): each problem and each skipped token as
    (line, message)."""
    folders = known_folders(crates)
    context = Context(crates)
    problems, skipped, counts = [], [], {"path": 0, "type": 0, "item": 0}
    lines = text.split("\n")
    by_line = {}
    for line, token, after in spans(text):
        by_line.setdefault(line, []).append((token, after))
    for number, line_text in enumerate(lines, 1):
        problem = context.line(line_text)
        if problem:
            problems.append((number, problem))
        for token, after in by_line.get(number, []):
            kind = classify(token, folders)
            shown = " ".join(token.split())
            if kind is None:
                continue
            if kind[0] == "skip":
                skipped.append((number, f"`{shown}`: {kind[1]}"))
            elif kind[0] == "type":
                if kind[1] in NOT_OURS:
                    skipped.append((number, f"`{shown}`: Rust's prelude or an HTTP header, not ours"))
                elif kind[1] in index.defined:
                    counts["type"] += 1
                else:
                    problems.append((number, f"`{shown}`: no type of that name in the workspace "
                                             "(another crate's type goes by its path, `bytes::Bytes`; a variant with its enum)"))
            elif kind[0] == "path":
                counts["path"] += 1
                found = context.find(kind[1])
                if found:
                    context.named(kind[1], found, kind[1].endswith("/") and after == ":")
                else:
                    problems.append((number, f"`{shown}`: no such file or folder (looked in {context.where()})"))
            else:
                _, owner, member = kind
                if owner not in index.defined:
                    skipped.append((number, f"`{shown}`: `{owner}` is not defined in the workspace"))
                    continue
                counts["item"] += 1
                if not index.has(owner, member, context.crate):
                    files = [os.path.relpath(f, ROOT) for f in index.files(owner, context.crate)]
                    problems.append((number, f"`{shown}`: `{owner}` ({', '.join(files)}) has no `{member}`"))
    return problems, skipped, counts


def self_test():
    """Runs the examples of what counts as a path and as a `Type::member`."""
    folders = {"crates", "docs", "scripts", "src", "tests"}
    cases = [
        ("crates/golem-mcp/src/session/connection.rs", ("path", "crates/golem-mcp/src/session/connection.rs")),
        ("session/connection.rs", ("path", "session/connection.rs")),
        ("session/modern/", ("path", "session/modern/")),
        ("docs/adr/0006-….md", ("path", "docs/adr/0006-….md")),
        ("lib.rs", ("path", "lib.rs")),
        ("tests/support", ("path", "tests/support")),
        ("tools/call", ("skip", "no extension, no trailing /, no known first folder: an MCP method, MIME type or package")),
        ("application/json", ("skip", "no extension, no trailing /, no known first folder: an MCP method, MIME type or package")),
        ("/mcp", ("skip", "a route")),
        ("https://example.com/a.json", ("skip", "a URL")),
        ("--config", None),
        ("Accept: */*", ("skip", "prose or code, not a path")),
        ("McpToolset", ("type", "McpToolset")),
        ("Tool<Deps>", ("type", "Tool")),
        ("GET", None),
        ("MAX_PAGES", None),
        ("Mcp-Session-Id", None),
        ("Connection::request", ("item", "Connection", "request")),
        ("Client::call_tool(name,\n   args)", ("item", "Client", "call_tool")),
        ("Client::as_tools::<Deps>", ("item", "Client", "as_tools")),
        ("Tool<Deps>::call", ("item", "Tool", "call")),
        ("golem_mcp::Client::connect()", ("item", "Client", "connect")),
        ("Error::Protocol", ("item", "Error", "Protocol")),
        ("golem_mcp::auth", ("skip", "a module path (second-to-last segment lowercase)")),
        ("golem_mcp::config::ConfigError", ("skip", "a module path (second-to-last segment lowercase)")),
        ("as_tools::<Deps>", None),
    ]
    failed = 0
    for token, expected in cases:
        got = classify(token, folders)
        if got != expected:
            failed += 1
            print(f"classify({token!r}) = {got!r}, expected {expected!r}")
    source = strip_rust(
        'pub enum Ended { Ran(CallOutcome), Cancelled }\n'
        'struct Shared { pub(crate) session: Mutex<Option<String>>, open: bool }\n'
        'impl<T: Into<String>> Shared { fn open(&self) -> u8 { let s = "}"; 1 } const MAX: usize = 2; }\n'
        'trait Revive { fn revive(&self) {} }\npub struct Client;\nimpl Revive for Client {}\n'
    )
    index = RustIndex([])
    index.read("crate", "inline.rs", source)
    for owner, member, expected in [
        ("Ended", "Ran", True), ("Ended", "Cancelled", True), ("Ended", "CallOutcome", False),
        ("Shared", "session", True), ("Shared", "open", True), ("Shared", "MAX", True),
        ("Shared", "s", False), ("Client", "revive", True), ("Client", "request", False),
    ]:
        if index.has(owner, member) != expected:
            failed += 1
            print(f"has({owner}::{member}) = {not expected}, expected {expected}")
    total = len(cases) + 9
    print(f"self-test: {total - failed}/{total} cases pass")
    return 1 if failed else 0


def main():
    if "--self-test" in sys.argv:
        return self_test()
    verbose = "--verbose" in sys.argv
    crates = workspace_crates()
    index = RustIndex(rust_files(crates))
    with open(DOC, encoding="utf-8") as file:
        text = without_fences(file.read())
    problems, skipped, counts = check(text, crates, index)
    doc = os.path.relpath(DOC, ROOT)
    if verbose:
        for line, message in skipped:
            print(f"{doc}:{line}: skipped {message}")
    for line, message in problems:
        print(f"{doc}:{line}: {message}")
    if problems:
        print(f"{doc}: {len(problems)} names not found; fix the doc (or the code)")
        return 1
    print(f"{doc}: {counts['path']} paths, {counts['type']} types and {counts['item']} "
          f"Type::member names, all found "
          f"({len(skipped)} tokens skipped; --verbose lists them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
