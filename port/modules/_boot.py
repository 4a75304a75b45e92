# SPDX-License-Identifier: MIT
# Run by port/main.c each time the VM starts, before the first prompt.
import storage

if storage.mount():
    # The field autosaved in the last run, if it asked to be restored (lo.autosave).
    try:
        import lo_store

        lo_store.boot()
    except Exception as e:  # noqa: BLE001 - the prompt must come whatever happens here
        print("field: restore at boot failed: %r" % (e,))
