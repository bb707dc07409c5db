"""Hostile helper, copied as `json.py` into the folder the oracle is started from (beside a buggy
submission): `python -m` puts that folder first on sys.path, so the oracle's own `import json`
would run this file in the deciding process. It then loads the real module (so nothing looks
broken), leaves a marker file, and makes every later comparison of the judge a match.
"""
import importlib
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_name = os.path.splitext(os.path.basename(__file__))[0]
del sys.modules[_name]
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != _here]
_real = importlib.import_module(_name)
globals().update({k: v for k, v in vars(_real).items() if not k.startswith("__")})
sys.modules[_name] = _real
with open(os.path.join(_here, "RAN_IN_THE_ORACLE"), "w") as _f:
    _f.write(str(os.getpid()))


class _AlwaysMatch:
    def find_spec(self, fullname, path=None, target=None):
        if fullname != "parity_tests.oracle.core.judge":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            module.Judge.compare = lambda self, reply, ref, case, mapping: module.Outcome(
                case=case, mapping=mapping)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _AlwaysMatch())
