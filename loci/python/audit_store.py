# SPDX-License-Identifier: MIT
# Where a mesh's capability audit log goes when it rolls over: files on /data, one per
# export, so the log never fills and its whole history survives the machine.
#
# A mesh's exports land in /data/audit/RUN/, RUN a number one past the highest already
# there (made at the first export, so meshes that never roll over leave nothing). Each
# export is written as NNNNNN.audit.tmp, closed, then renamed to NNNNNN.audit: a cut
# power leaves a whole file or none. Laid end to end in name order the files form one
# hash chain, which `tools/auditlog.py verify` checks on the host (loci/cap/README.md has
# the record layout).
import os

ROOT = "/data/audit"
SUFFIX = ".audit"


def _mkdirs(path):
    import storage

    here = ""
    for part in path.strip("/").split("/"):
        here += "/" + part
        if not storage.exists(here):
            os.mkdir(here)


def data_mounted():
    """True when /data is mounted (storage.py): exports have somewhere to go."""
    try:
        import storage
    except ImportError:
        return False
    return bool(storage.mounted)


class AuditStore:
    """Writes a mesh's audit exports under `root`, in a run directory of its own."""

    def __init__(self, root=ROOT):
        self.root = root
        self.dir = None          # /data/audit/RUN once the first export is written
        self.files = 0
        self.bytes = 0

    def _run_dir(self):
        _mkdirs(self.root)
        top = 0
        for name in os.listdir(self.root):
            if name.isdigit():
                top = max(top, int(name))
        d = "%s/%04d" % (self.root, top + 1)
        os.mkdir(d)
        return d

    def save(self, data):
        """Write one export; returns its path. Raises OSError (no room, no /data)."""
        if self.dir is None:
            self.dir = self._run_dir()
        path = "%s/%06d%s" % (self.dir, self.files, SUFFIX)
        tmp = path + ".tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
        except OSError:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise
        os.rename(tmp, path)
        self.files += 1
        self.bytes += len(data)
        return path
