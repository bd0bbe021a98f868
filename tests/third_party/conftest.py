"""Set-up for the peers' own test files (keras and keras-hub, run against our layers).

keras-hub's test harness (`keras_hub.src.tests.test_case`) imports `grain` at
module level for its preprocessing-layer checks, which the modeling-layer
tests here never reach. Where grain is not installed, an empty stand-in
module lets the harness import; a test that did use grain would fail loudly
on the missing attribute.
"""

import importlib.util
import sys
import types

if importlib.util.find_spec("grain") is None:
    sys.modules["grain"] = types.ModuleType("grain")
