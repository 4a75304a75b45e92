# SPDX-License-Identifier: MIT
# test_opt_native.py: a littlefs RAM disk at /ram holding a module, and its import.
import vfs, sys
class RAMBlock:
    def __init__(self, n):
        self.data = bytearray(n * 512)
    def readblocks(self, b, buf, off=0):
        a = b * 512 + off
        buf[:] = self.data[a:a + len(buf)]
    def writeblocks(self, b, buf, off=None):
        a = b * 512 + (off or 0)
        self.data[a:a + len(buf)] = buf
    def ioctl(self, op, arg):
        if op == 4:
            return len(self.data) // 512
        if op == 5:
            return 512
        if op == 6:
            return 0
bd = RAMBlock(128)
vfs.VfsLfs2.mkfs(bd)
vfs.mount(vfs.VfsLfs2(bd), '/ram')
with open('/ram/modfast.py', 'w') as f:
    f.write('def fsum(n):\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n')
sys.path.append('/ram')
import modfast
