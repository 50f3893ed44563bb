"""The comm family from Python across processes: mpirun starts the ranks (mpi_worker.py)."""
import os
import shutil
import subprocess
import sys

import pytest

WORKER = os.path.join(os.path.dirname(__file__), "mpi_worker.py")


def mpirun(n, mode):
    if shutil.which("mpirun") is None:
        pytest.skip("mpirun is not installed")
    env = dict(os.environ, FERRO_COMM_TIMEOUT="60")
    out = subprocess.run(["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(n), sys.executable, WORKER, mode],
                         capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr
    for r in range(n):
        assert f"rank {r} of {n} ok" in out.stdout


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_gradients_and_distributed_einsum_across_ranks(n):
    mpirun(n, "world")


def test_an_mpi4py_communicator_is_adopted():
    pytest.importorskip("mpi4py")
    mpirun(3, "adopted")
