import sys

import pytest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items, config):
    i = items[0]
    print("DBG", i._nodeid, "|", i.nodeid, file=sys.stderr)
