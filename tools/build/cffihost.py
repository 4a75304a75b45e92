# SPDX-License-Identifier: MIT
"""Host builds of LociOS's pure C for tests/host and vm/*/host: one place for the compile
flags, the sanitizer variants and the cache under build/host/, and cffi declarations read
from the public headers themselves, so none is copied by hand and none can drift.

    m = cffihost.build("rewrite", sources=[RW / "rw_plan.c"], headers=[RW / "rw_plan.h"])
    m.lib.rw_plan(...); m.ffi.new("rw_edit_t[]", 4)

The headers are preprocessed (gcc -E -P) against empty stand-ins for the C library's
headers, whose types cffi knows already; what cffi cannot parse or call (function bodies,
static data, _Static_assert, __attribute__, va_list) is left out, and every integer macro
the headers define becomes a `#define NAME ...` whose value the compiler supplies.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "host"
# MicroPython's vendored SHA-256, which the field and the capability table link.
SHA_DIR = ROOT / "build" / "micropython-1.25.0" / "lib" / "crypto-algorithms"

BASE = ["-std=c11", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-sanitize-recover=all"]
WARN = ["-Wall", "-Wextra", "-Werror"]
# ubsan loads into this Python; asan only into a process that loaded libasan first
# (asan_env()), or as a native executable (executable()).
SANITIZE = {"ubsan": ["-fsanitize=undefined"], "asan": ["-fsanitize=address,undefined"]}
# Vendored C is compiled from its own tree and not held to our warnings (MicroPython's
# sha256.c uses uint32_t and memset without including their headers).
VENDORED = ["-include", "stdint.h", "-include", "string.h", "-w"]
# The C library headers ours include; empty while reading declarations.
LIBC_HEADERS = ("stdint.h", "stddef.h", "stdbool.h", "stdarg.h", "string.h", "limits.h")


# ---- declarations from headers ---------------------------------------------------------
def _gcc_e(headers: list[Path], include_dirs: list[Path], defines: tuple[str, ...],
           extra: list[str]) -> str:
    stub = OUT / "libc-stubs"
    stub.mkdir(parents=True, exist_ok=True)
    for name in LIBC_HEADERS:
        (stub / name).write_text("")
    src = "".join(f'#include "{h}"\n' for h in headers)
    cmd = ["gcc", "-E", "-P", "-nostdinc", "-isystem", str(stub),
           *(f"-I{d}" for d in include_dirs), *(f"-D{d}" for d in defines), *extra, "-"]
    return subprocess.run(cmd, input=src, capture_output=True, text=True, check=True).stdout


_INT_TOKEN = re.compile(r"\s+|0[xX][0-9a-fA-F]+[uUlL]*(?![\w.])|\d+[uUlL]*(?![\w.])"
                        r"|[A-Za-z]\w*|<<|>>|[-+*/%&|^~!()<>=?:]")


def _integer_macros(headers, include_dirs, defines) -> list[str]:
    """Names of the object-like macros the headers define whose value is an integer
    constant expression (no strings, floats, attributes)."""
    ours = _gcc_e(headers, include_dirs, defines, ["-dM"])
    builtin = set(_gcc_e([], [], (), ["-dM"]).splitlines())
    names = []
    for line in ours.splitlines():
        m = re.fullmatch(r"#define ([A-Za-z]\w*) (.+)", line)
        if line in builtin or not m:
            continue   # a builtin, a function-like macro or an empty one (a guard)
        value = m.group(2)
        tokens = _INT_TOKEN.findall(value)
        if "".join(tokens) == value and "__" not in value:
            names.append(m.group(1))
    return sorted(names)


def _drop_attributes(text: str) -> str:
    out, i = [], 0
    while (j := text.find("__attribute__", i)) >= 0:
        out.append(text[i:j])
        k = text.index("(", j)
        depth = 0
        while True:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
            if depth == 0:
                break
        i = k
    return "".join(out) + text[i:]


def _top_level(text: str) -> list[str]:
    """The preprocessed text as top-level declarations; function definitions and their
    bodies come out whole (they end at their closing brace, not at a semicolon)."""
    decls, start, depth, body = [], 0, 0, False
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                body = text[start:i].rstrip().endswith(")")
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and body:
                decls.append(text[start:i + 1])
                start, body = i + 1, False
        elif c == ";" and depth == 0:
            decls.append(text[start:i + 1])
            start = i + 1
    return [d.strip() for d in decls if d.strip()]


def declarations(headers: list[Path], include_dirs: list[Path] = (),
                 defines: tuple[str, ...] = ()) -> str:
    """The cffi cdef of the headers (see the module's docstring)."""
    text = _drop_attributes(_gcc_e(headers, include_dirs, defines, []))
    keep = []
    for d in _top_level(text):
        if d.startswith(("static ", "_Static_assert")) or d.endswith("}"):
            continue   # inline functions and static data: nothing cffi can bind
        if re.search(r"\bva_list\b", d):
            continue   # cffi cannot pass a va_list; the `...` twin is what Python calls
        keep.append(d)
    consts = "".join(f"#define {n} ...\n" for n in _integer_macros(headers, include_dirs,
                                                                  defines))
    return consts + "\n".join(keep) + "\n"


# ---- building -------------------------------------------------------------------------
def _digest(*parts, files=()) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode())
    for f in sorted(set(files)):
        h.update(str(f).encode() + Path(f).read_bytes())
    return h.hexdigest()[:12]


def _dependencies(sources, include_dirs, cflags) -> list[Path]:
    """The sources and every header they include (gcc -MM): what the cache key covers."""
    out = subprocess.run(["gcc", "-MM", *cflags, *(f"-I{d}" for d in include_dirs),
                          *map(str, sources)], capture_output=True, text=True, check=True)
    deps = out.stdout.replace("\\\n", " ").split()
    return [Path(d) for d in deps if not d.endswith(":")]


def build(name: str, sources: list[Path], headers: list[Path],
          include_dirs: list[Path] | None = None, *, flags: tuple[str, ...] = (),
          defines: tuple[str, ...] = (), vendored: list[Path] = (), variant: str = "ubsan",
          load: bool = True):
    """The cffi module (.ffi, .lib) of `sources`, declaring what `headers` declare;
    compiled once per change of sources, headers, flags or defines, under
    build/host/<name>/. `flags` are extra compile flags, `defines` -D macros (for
    reading the headers too), `vendored` C files compiled apart (VENDORED flags).
    variant: "ubsan" (loadable here) or "asan" (load=False builds it for a process
    with asan_env())."""
    import cffi

    include_dirs = list(include_dirs if include_dirs is not None
                        else dict.fromkeys(Path(h).parent for h in headers))
    if vendored:
        include_dirs += [d for d in dict.fromkeys(Path(v).parent for v in vendored)
                         if d not in include_dirs]
    cflags = BASE + SANITIZE[variant] + list(flags) + [f"-D{d}" for d in defines]
    cdef = declarations(headers, include_dirs, defines)
    out = OUT / name
    deps = _dependencies([*sources, *vendored], include_dirs, cflags)
    modname = f"_{name}_{variant}_" + _digest(cdef, cflags, WARN, VENDORED, files=deps)
    if out.is_file():
        out.unlink()   # a build/ from before this layout may hold a file of that name
    out.mkdir(parents=True, exist_ok=True)
    if str(out) not in sys.path:
        sys.path.insert(0, str(out))
    if not list(out.glob(modname + ".*.so")):
        objects = []
        for v in vendored:
            obj = out / f"{Path(v).stem}_{modname}.o"
            subprocess.run(["gcc", *cflags, "-fPIC", *VENDORED, "-c", str(v), "-o", str(obj)],
                           check=True)
            objects.append(str(obj))
        ffi = cffi.FFI()
        ffi.cdef(cdef)
        ffi.set_source(modname, "".join(f'#include "{Path(h).name}"\n' for h in headers),
                       sources=[str(s) for s in sources],
                       include_dirs=[str(d) for d in include_dirs],
                       extra_compile_args=cflags + WARN, extra_objects=objects,
                       extra_link_args=SANITIZE[variant])
        ffi.compile(tmpdir=str(out), verbose=False)
    return importlib.import_module(modname) if load else None


def asan_env() -> dict[str, str]:
    """Environment for a child Python that loads an "asan" variant: libasan preloaded,
    CPython's own allocations not judged (leak checking off)."""
    lib = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True,
                         text=True, check=True).stdout.strip()
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"
    return env


# The main() of a sanitizer driver over input files: each file named on the command line
# is copied into a heap buffer of exactly its size, so that any over-read is caught, and
# given to the driver's own check_file().
FILES_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp) return 2;
        fseek(fp, 0, SEEK_END); long n = ftell(fp); fseek(fp, 0, SEEK_SET);
        unsigned char *buf = malloc(n ? (size_t)n : 1);
        if (n && fread(buf, 1, (size_t)n, fp) != (size_t)n) return 2;
        fclose(fp);
        check_file(buf, (size_t)n);
        free(buf);
    }
    return 0;
}
"""


def executable(name: str, sources: list[Path], include_dirs: list[Path], *,
               check_file: str | None = None, variant: str = "asan",
               flags: tuple[str, ...] = (), vendored: list[Path] = (),
               warn: bool = True) -> Path:
    """A native program (a sanitizer driver) of `sources`, built under build/host/<name>/
    once per change. check_file: C text defining `static void check_file(const unsigned
    char *buf, size_t n)` (and what it includes), run by FILES_MAIN on every file the
    program is given; without it a source has the main(). A failed compile raises
    CalledProcessError (its stderr says why)."""
    out = OUT / name
    if out.is_file():
        out.unlink()   # a build/ from before this layout kept the program itself there
    out.mkdir(parents=True, exist_ok=True)
    cflags = BASE + SANITIZE[variant] + list(flags)
    deps = _dependencies([*sources, *vendored], include_dirs, cflags)
    exe = out / (f"{name}_{variant}_" + _digest(check_file, FILES_MAIN, cflags, warn, VENDORED,
                                                files=deps))
    if check_file is not None:
        main = out / f"{exe.name}.c"
        main.write_text(check_file + FILES_MAIN)
        sources = [main, *sources]
    if not exe.exists():
        objects = []
        for v in vendored:
            obj = out / f"{Path(v).stem}_{exe.name}.o"
            subprocess.run(["gcc", *cflags, *VENDORED, "-c", str(v), "-o", str(obj)],
                           check=True, capture_output=True, text=True)
            objects.append(str(obj))
        subprocess.run(["gcc", *cflags, *(WARN if warn else []),
                        *(f"-I{d}" for d in include_dirs), *map(str, sources), *objects,
                        "-o", str(exe)], check=True, capture_output=True, text=True)
    return exe
