# SPDX-License-Identifier: MIT
# The console the inspectors draw on: its size, a key without blocking, and a pager.
# Output goes to every console at once (serial line and screen), so a picture must fit
# the smallest: the screen console's grid (kernel.console_size()) and the serial
# terminal's, which only the terminal knows and tells in a cursor-position report.
import sys

FALLBACK = (80, 24)   # a serial terminal that does not answer is taken to be this
ASK_MS = 250          # how long to wait for that answer (once per session)
# Save the cursor, go as far right and down as the terminal allows, ask where the cursor
# is, restore it. A terminal answers ESC [ rows ; cols R; the screen console ignores the
# question (and so leaves its cursor where it was).
ASK = "\x1b[s\x1b[999;999H\x1b[6n\x1b[u"
_size = [None]
_one_screen = [False]   # set while a live view captures a frame: never wait for a key


def _poller():
    import select
    p = select.poll()
    p.register(sys.stdin, select.POLLIN)
    return p


def key(timeout_ms=0):
    """One character typed at the console within timeout_ms (0: only if already there),
    else None. Ctrl-C still raises KeyboardInterrupt, as everywhere in the REPL."""
    if _poller().poll(timeout_ms):
        return sys.stdin.read(1)
    return None


def parse_report(text):
    """(columns, rows) from a cursor-position report ESC [ rows ; cols R, else None."""
    if not (text.startswith("\x1b[") and text.endswith("R") and ";" in text):
        return None
    r, c = text[2:-1].split(";", 1)
    if r.isdigit() and c.isdigit() and int(r) > 0 and int(c) > 0:
        return int(c), int(r)
    return None


def _ask_terminal():
    import kernel
    sys.stdout.write(ASK)
    p = _poller()
    got = ""
    t0 = kernel.uptime_ms()
    while len(got) < 16 and kernel.uptime_ms() - t0 < ASK_MS:
        if not p.poll(10):
            continue
        c = sys.stdin.read(1)
        if got or c == "\x1b":
            got += c
        if c == "R":
            break
    return parse_report(got)


def size(refresh=False):
    """(columns, rows) that every console can show; asked once, then remembered.
    size(True) asks again (after resizing the terminal)."""
    if _size[0] is None or refresh:
        import kernel
        term = _ask_terminal() or FALLBACK
        scr = kernel.console_size()
        if scr is not None:
            term = (min(term[0], scr[0]), min(term[1], scr[1]))
        _size[0] = term
    return _size[0]


def set_size(cols, rows):
    """Take the console to be cols x rows (skips asking the terminal)."""
    _size[0] = (max(20, int(cols)), max(4, int(rows)))


def page(lines, rows=None):
    """Print lines a screenful at a time: after each, a key shows the next screenful
    and q (or Esc) stops. Returns how many lines were printed."""
    if rows is None:
        rows = size()[1]
    step = max(1, rows - 2)
    done = 0
    while done < len(lines):
        for line in lines[done:done + step]:
            print(line)
        done = min(done + step, len(lines))
        if done >= len(lines):
            break
        if _one_screen[0]:
            print("-- %d more --" % (len(lines) - done))
            break
        sys.stdout.write("-- %d more: any key, q to stop --" % (len(lines) - done))
        c = sys.stdin.read(1)
        sys.stdout.write("\r\x1b[K")
        if c in ("q", "Q", "\x1b"):
            break
    return done
