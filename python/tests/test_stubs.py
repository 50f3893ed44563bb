"""The committed type stubs are what stubgen makes of the extension now."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
import make_stubs  # noqa: E402

COMMITTED = os.path.join(os.path.dirname(__file__), "..", "src", "ferro", "_ferro.pyi")


def test_committed_stub_is_current(tmp_path):
    pytest.importorskip("nanobind")
    fresh = tmp_path / "_ferro.pyi"
    make_stubs.generate(str(fresh))
    with open(COMMITTED) as f:
        committed = f.read()
    assert fresh.read_text() == committed, "python/src/ferro/_ferro.pyi is stale: run python/tools/make_stubs.py"


def test_stub_declares_the_python_layer_methods():
    with open(COMMITTED) as f:
        stub = f.read()
    for method in ("def __getitem__", "def reshape", "def sum", "def T(self)", "def __dlpack__", "def astype"):
        assert method in stub
