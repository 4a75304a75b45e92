# SPDX-License-Identifier: MIT
# Workload of test_powercut.py: pc_work() writes to /data without end until QEMU is
# killed, and says on the console what it starts and what it has finished, one line each
# ("PC <what>> n |" before, "PC <what> n ... |" once it returned; the bar ends a
# marker that a cut leaves without its line end), so that the host knows
# after the cut which writes were complete and which one the cut fell inside:
#   as   an autosave of the running field (lo_store: write-then-rename of .journal, .snap)
#   w    /data/pc/state rewritten by write-then-rename, generation n, state_text(n)
#   a    line n appended to /data/pc/log and flushed (littlefs syncs the file)
#   ns   lo.save('mine') every eighth turn: /data/field/mine.snap, the last one kept as
#        mine.prev.snap ("PC ns> k tick digest |" gives the field it is writing)
# The field is the one restored at boot, or a new one when nothing was restored.
import os
import lo
import lo_store
from lo import use, autosave, Field, grid, keyed

PC = '/data/pc'


def state_text(n):
    # Longer than one 4 KiB littlefs block, so a rewrite spans blocks.
    return 'gen %d\n' % n + ('%d,' % n) * (5000 // (len(str(n)) + 1)) + '\nend\n'


def log_line(n):
    return 'line %06d %s\n' % (n, 'abcdefghij'[n % 10] * (n % 37))


def _hexd(f):
    return ''.join('%02x' % b for b in f.digest()[:8])


def pc_work(ticks=2, keep=3):
    try:
        os.mkdir(PC)
    except OSError:
        pass
    f = lo.F
    if f is None:
        # Two 80x60 grids: a snapshot of about 40 KB, ten littlefs blocks to write.
        f = use(Field([grid('food', 80, 60, E=0.05, G=0.3), grid('trail', 80, 60, E=0.1,
                                                                   G=0.5),
                       keyed('work', 32, E=0.05, min=0.01)]))
        autosave(ticks=ticks, keep=keep)
    try:
        gen = int(open(PC + '/state').readline().split()[1])
    except (OSError, ValueError, IndexError):
        gen = 0
    try:
        n = len(open(PC + '/log').read().split('\n')) - 1
    except OSError:
        n = 0
    log = open(PC + '/log', 'a')
    print('PC go', gen, n, f.tick_count(), _hexd(f), '|')
    s = f.tick_count() * 7 + 1
    while True:
        for _ in range(4):
            s = (s * 1103515245 + 12345) & 0x7FFFFFFF
            f.deposit('trail', (s % 80, (s >> 8) % 60), 1.0 + (s >> 20) % 4, 100 + s % 3)
        f.deposit('work', 'task%d' % (s % 7), 1.0, 200)
        due = f.tick_count() + 1 >= lo_store._AUTO['next']
        saved = lo_store._AUTO['saved']
        if due:
            print('PC as>', f.tick_count() + 1, '|')
        t = f.tick()
        if lo_store._AUTO['saved'] != saved:
            print('PC as', lo_store._autos()[-1], t, _hexd(f), '|')
        gen += 1
        print('PC w>', gen, '|')
        with open(PC + '/state.tmp', 'w') as h:
            h.write(state_text(gen))
        os.rename(PC + '/state.tmp', PC + '/state')
        print('PC w', gen, '|')
        print('PC a>', n, '|')
        log.write(log_line(n))
        log.flush()
        print('PC a', n, '|')
        if n % 8 == 0:
            print('PC ns>', n // 8, f.tick_count(), _hexd(f), '|')
            lo.save('mine')
            print('PC ns', n // 8, '|')
        n += 1
