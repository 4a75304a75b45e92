#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check the tracked Markdown files against the tree they describe.

A problem is a `make TARGET` that the top Makefile does not define, or a repository
path (in backticks, a code block or a Markdown link) that is not in the tree. A figure
quoted next to its command is covered by the same two rules: the command is a make
target or a path. Prints one `file:line: problem` line each and exits 1 if there is
any; silent and 0 when all is well. `make docs-check` runs it; `make test` too.

What counts as a path: a word with a `/` whose first part is a top-level folder of the
repository, or a folder next to the document (`python/mesh.py` in loci/README.md);
link targets resolve against the document's folder. Not checked: build/ (outputs),
anything outside the repository, absolute paths, URLs. `*` is a glob; `vm/patches/0008`
names the patch numbered 0008. A path missing here but present in the MicroPython tree
the Makefile builds from (`MICROPY_DIR`, e.g. `tests/run-tests.py`) is MicroPython's.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

# Top-level folders a path may start with even when the folder itself is gone (a doc
# naming `.ci/x` after .ci/ was removed must still be caught); the folders the index
# holds are added to these.
TOP_FOLDERS = frozenset({"boot", "kernel", "port", "vm", "loci", "tools", "tests", "qemu", ".ci"})
# Outputs, not sources: a doc may name them before they are built.
OUTPUT_FOLDERS = frozenset({"build"})
# Fenced blocks in these languages are programs, not shell: a `make` in them is a word.
NON_SHELL_LANGS = frozenset({"python", "py", "pycon", "c", "json", "text", "diff"})

FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)")
CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
LINK_RE = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")
REF_DEF_RE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
# Characters that end a path inside a command or a sentence.
TOKEN_SPLIT_RE = re.compile(r"[\s()\[\]{}<>\"'`,;=|&]+")
PATH_TRAIL = ".,:;!?"
SHELL_SEP_RE = re.compile(r"&&|\|\||[;|()`]|\$\(")
ENV_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
TARGET_RE = re.compile(r"^[A-Za-z0-9_./%+-]+$")


@dataclass(frozen=True)
class Problem:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


@dataclass(frozen=True)
class Snippet:
    """A piece of a Markdown file to check: its text and where it starts."""

    text: str
    line: int
    shell: bool  # may hold shell commands (`make ...`)


# ---- the tree and the Makefile -------------------------------------------------------


def git(root: Path, *args: str) -> list[str]:
    out = subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    return [line for line in out.split("\n") if line]


def tree_entries(root: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(files, folders) of the tree: tracked and untracked-but-not-ignored files that
    exist on disk, and every folder holding one."""
    names = git(root, "ls-files", "--cached", "--others", "--exclude-standard")
    files = frozenset(n for n in names if (root / n).exists())
    folders = {str(p) for f in files for p in PurePosixPath(f).parents if str(p) != "."}
    return files, frozenset(folders)


@dataclass(frozen=True)
class MakeDb:
    targets: frozenset[str]
    patterns: tuple[re.Pattern[str], ...]
    variables: dict[str, str]

    def expand(self, value: str, depth: int = 0) -> str:
        """$(NAME) and ${NAME} references expanded from the database's variables."""
        if depth > 20:
            return value
        return re.sub(
            r"\$[({]([A-Za-z0-9_]+)[)}]",
            lambda m: self.expand(self.variables.get(m.group(1), ""), depth + 1),
            value,
        )


def make_database(root: Path) -> MakeDb:
    """The Makefile's explicit targets, its pattern rules (as regexes) and its variables,
    from make's own database, so included fragments and computed names count."""
    # Under `make docs-check` the parent's flags (-n, -j's jobserver) must not reach it.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.run(
        ["make", "-pRrq", "-f", "Makefile", ":"],
        env=env,
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    names: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    variables: dict[str, str] = {}
    not_a_target = in_define = False
    for line in proc.stdout.split("\n"):
        if in_define:
            in_define = line != "endef"
            continue
        if line.startswith("define "):
            in_define = True
            continue
        if line.startswith("# Not a target:"):
            not_a_target = True
            continue
        if not line or line[0] in "\t#.":
            continue
        var = re.match(r"^([A-Za-z0-9_]+) *(?::{1,3}|\?|\+|!)?= ?(.*)$", line)
        if var is not None:
            variables[var.group(1)] = var.group(2)
            not_a_target = False
            continue
        m = re.match(r"^([^:=]+?)::?(?!=)", line)
        if m is None:
            continue
        if not_a_target:
            not_a_target = False
            continue
        for name in m.group(1).split():
            if "%" in name:
                stem = re.escape(name).replace("%", "(.+)")
                patterns.append(re.compile(f"^{stem}$"))
            else:
                names.add(name)
    if not names:
        raise SystemExit(f"docs_check: `make -pRrq` in {root} printed no targets")
    return MakeDb(frozenset(names), tuple(patterns), variables)


# ---- reading Markdown ----------------------------------------------------------------


def split_markdown(text: str) -> tuple[list[Snippet], str]:
    """Code blocks (fenced or indented) as snippets, and the prose with those blocks
    blanked out (newlines kept, so offsets still give line numbers)."""
    lines = text.split("\n")
    blocks: list[Snippet] = []
    prose = list(lines)
    i = 0
    prev_blank = True
    while i < len(lines):
        line = lines[i]
        fence = FENCE_RE.match(line)
        if fence:
            marker, lang = fence.group(1), fence.group(2).lower()
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith(marker):
                j += 1
            body = lines[i + 1 : j]
            blocks.append(Snippet("\n".join(body), i + 2, lang not in NON_SHELL_LANGS))
            for k in range(i, min(j + 1, len(lines))):
                prose[k] = ""
            i = j + 1
            prev_blank = True
            continue
        if prev_blank and (line.startswith("    ") or line.startswith("\t")) and line.strip():
            j = i
            while j < len(lines) and (
                lines[j].startswith("    ") or lines[j].startswith("\t") or not lines[j].strip()
            ):
                j += 1
            while j > i and not lines[j - 1].strip():
                j -= 1
            body = lines[i:j]
            shell = not body[0].lstrip().startswith(">>>")  # a REPL session is Python
            blocks.append(Snippet("\n".join(body), i + 1, shell))
            for k in range(i, j):
                prose[k] = ""
            i = j
            prev_blank = False
            continue
        prev_blank = not line.strip()
        i += 1
    return blocks, "\n".join(prose)


def inline_snippets(prose: str) -> tuple[list[Snippet], list[tuple[str, int]]]:
    """Code spans (which may run over a line break, not over a blank line) and link
    targets, with their line numbers."""
    spans: list[Snippet] = []
    for m in CODE_SPAN_RE.finditer(prose):
        body = m.group(2)
        if "\n\n" in body or re.search(r"\n\s*\n", body):
            continue
        spans.append(Snippet(body, prose.count("\n", 0, m.start()) + 1, True))
    links: list[tuple[str, int]] = []
    unspanned = CODE_SPAN_RE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), prose)
    for m in LINK_RE.finditer(unspanned):
        links.append((m.group(1), unspanned.count("\n", 0, m.start()) + 1))
    for m in REF_DEF_RE.finditer(unspanned):
        links.append((m.group(1), unspanned.count("\n", 0, m.start()) + 1))
    return spans, links


def make_commands(text: str) -> list[tuple[list[str], int]]:
    """The targets of every `make ...` command in a snippet, with the line (0-based,
    within the snippet) it is on. Commands with -f or -C read another makefile or
    folder and are not checked here."""
    found: list[tuple[list[str], int]] = []
    for lineno, line in enumerate(text.split("\n")):
        line = re.sub(r"(^|\s)#.*$", "", line)  # shell comment
        for cmd in SHELL_SEP_RE.split(line):
            words = cmd.split()
            while words and (words[0] in ("$", "%") or ENV_ASSIGN_RE.match(words[0])):
                words.pop(0)
            if not words or words[0] != "make":
                continue
            targets: list[str] = []
            other_makefile = False
            args = iter(words[1:])
            for w in args:
                if w in ("-f", "--file", "-C", "--directory"):
                    value = next(args, "")
                    other_makefile |= not (w in ("-f", "--file") and value == "Makefile")
                elif w.startswith(("--file=", "--directory=", "-C")) or (
                    w.startswith("-f") and w != "-f" and w[2:] != "Makefile"
                ):
                    other_makefile = True
                elif w.startswith("-") or "=" in w:
                    continue
                elif w.startswith("."):
                    break  # `make ...`: an ellipsis, not a target
                elif TARGET_RE.match(w):
                    targets.append(w)
                else:
                    break  # prose or a placeholder: the command ends here
            if targets and not other_makefile:
                found.append((targets, lineno))
    return found


# ---- the checks ----------------------------------------------------------------------


class Checker:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files, self.folders = tree_entries(root)
        self.top = TOP_FOLDERS | {f for f in self.folders if "/" not in f}
        self.make = make_database(root)
        upstream = self.make.expand(self.make.variables.get("MICROPY_DIR", ""))
        self.upstream = (root / upstream) if upstream else None

    def target_exists(self, name: str) -> bool:
        return name in self.make.targets or any(p.match(name) for p in self.make.patterns)

    def in_upstream(self, rel: str) -> bool:
        """Whether MicroPython's tree (the one the build uses) has this path."""
        if self.upstream is None or not self.upstream.is_dir():
            return False
        if "*" in rel or "?" in rel:
            return any(self.upstream.glob(rel.rstrip("/")))
        return (self.upstream / rel).exists()

    def exists(self, rel: str) -> bool:
        """Whether a repository-relative path (a glob if it has `*`; a folder if it ends
        in `/`) names something in the tree."""
        want_dir = rel.endswith("/")
        rel = rel.rstrip("/")
        if "*" in rel or "?" in rel:
            rx = re.compile(
                "^"
                + "".join(
                    "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in rel
                )
                + "$"
            )
            pool = self.folders if want_dir else self.files | self.folders
            return any(rx.match(p) for p in pool)
        if rel in self.folders or (not want_dir and rel in self.files):
            return True
        head, _, last = rel.rpartition("/")
        if last.isdigit():  # a numbered file by its number: vm/patches/0008
            prefix = f"{head}/{last}-" if head else f"{last}-"
            return any(f.startswith(prefix) for f in self.files)
        return False

    def missing(self, rel: str) -> bool:
        return not self.exists(rel) and not self.in_upstream(rel)

    def resolve(self, token: str, md_dir: PurePosixPath, link: bool) -> str | None:
        """The repository-relative path a token names, or None if it names none we
        check (not a path, outside the repository, or a build output)."""
        token = token.split("#", 1)[0] if link else token
        token = token.split("::", 1)[0]  # pytest node ids
        token = re.sub(r":\d+(?::\d+)?$", "", token.rstrip(PATH_TRAIL)).rstrip(PATH_TRAIL)
        if not token or "$" in token or "://" in token or token.startswith(("mailto:", "~")):
            return None
        if token.startswith("/"):
            if not link:
                return None  # an absolute path on some machine, not in the repository
            parts = [p for p in token.split("/") if p]
        else:
            first = token.split("/", 1)[0]
            if link:
                base = list(md_dir.parts)
            elif "/" in token and first in self.top:
                base = []
            elif "/" in token and md_dir.parts and str(md_dir / first) in self.folders:
                base = list(md_dir.parts)  # relative to the document's own folder
            else:
                return None
            parts = base + token.split("/")
        out: list[str] = []
        for p in parts:
            if p in ("", "."):
                continue
            if p == "..":
                if not out:
                    return None  # leaves the repository
                out.pop()
            else:
                out.append(p)
        if not out or out[0] in OUTPUT_FOLDERS:
            return None
        return "/".join(out) + ("/" if token.endswith("/") else "")

    def check_file(self, md: str) -> list[Problem]:
        text = (self.root / md).read_text(encoding="utf-8", errors="replace")
        md_dir = PurePosixPath(md).parent
        blocks, prose = split_markdown(text)
        spans, links = inline_snippets(prose)
        problems: list[Problem] = []
        for snip in blocks + spans:
            if snip.shell:
                for targets, off in make_commands(snip.text):
                    for t in targets:
                        if not self.target_exists(t):
                            problems.append(
                                Problem(
                                    md,
                                    snip.line + off,
                                    f"`make {t}`: the Makefile has no target {t!r}",
                                )
                            )
            for off, line in enumerate(snip.text.split("\n")):
                for tok in TOKEN_SPLIT_RE.split(line):
                    rel = self.resolve(tok, md_dir, link=False)
                    if rel is not None and self.missing(rel):
                        problems.append(
                            Problem(md, snip.line + off, f"{rel}: no such path in the tree")
                        )
        for target, line in links:
            rel = self.resolve(target, md_dir, link=True)
            if rel is not None and self.missing(rel):
                problems.append(Problem(md, line, f"link to {rel}: no such path in the tree"))
        return sorted(set(problems), key=lambda p: (p.line, p.what))

    def run(self) -> list[Problem]:
        docs = [
            d
            for d in git(self.root, "ls-files", "*.md")
            if d.split("/", 1)[0] not in OUTPUT_FOLDERS
        ]
        return [p for md in sorted(docs) if (self.root / md).is_file() for p in self.check_file(md)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument(
        "--root",
        type=Path,
        help="repository root (default: the git top level of the current folder)",
    )
    args = ap.parse_args(argv)
    root = args.root or Path(git(Path.cwd(), "rev-parse", "--show-toplevel")[0])
    problems = Checker(root.resolve()).run()
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
