# SPDX-License-Identifier: MIT
# test_upstream_aggressive.py: runs one upstream test's source with the rewriter's
# aggressive mode on or off, printing an exception instead of raising it.
import _rw
def runsrc(src, aggr):
    code = compile(src, 'test.py', 'exec')
    _rw.aggressive(aggr)
    try:
        exec(code, {'__name__': '__main__'})
    except BaseException as e:
        print('EXC', type(e).__name__, e.args)
    finally:
        _rw.aggressive(False)
