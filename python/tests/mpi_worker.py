"""Run by test_mpi.py under mpirun: the comm family from Python on every rank. Exits non-zero
(an assertion) when a rank sees a wrong value."""
import sys

import numpy as np

import ferro


def world():
    rank, size = ferro.comm.rank(), ferro.comm.size()
    x = np.arange(3.0) + rank
    total = ferro.comm.allreduce(x)
    np.testing.assert_array_equal(np.asarray(total), size * np.arange(3.0) + size * (size - 1) / 2)
    gathered = ferro.comm.allgather(x)
    assert gathered.shape == (size, 3)
    np.testing.assert_array_equal(np.asarray(gathered)[:, 0], np.arange(size))
    np.testing.assert_array_equal(np.asarray(ferro.comm.broadcast(x, root=size - 1)), np.arange(3.0) + size - 1)
    # the summed-loss gradient: d/dx_r sum_ranks sum(allreduce(x)^2) = 2 * size * allreduce(x)
    g = ferro.grad(lambda t: (ferro.comm.allreduce(t) ** 2).sum())(x)
    np.testing.assert_allclose(np.asarray(g), 2 * size * np.asarray(total))
    a = np.random.default_rng(0).standard_normal((8, 8))  # the same on every rank
    got = ferro.einsum("ij,jk,kl->il", a, a, a, slices=4, distribute=True)
    np.testing.assert_allclose(np.asarray(got), a @ a @ a, rtol=1e-12)
    ferro.comm.barrier()
    return rank, size


def adopted():
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    half = world.Split(color=0 if world.rank < 2 else 1, key=world.rank)
    rt = ferro.Runtime(communicator=half)
    assert rt.rank_size() == (half.rank, half.size)
    y = ferro.comm.allreduce(ferro.asarray([1.0], runtime=rt))
    assert y.item() == half.size
    assert ferro.comm.size() == world.size  # the default runtime keeps the world
    with_bad = None
    try:
        ferro.Runtime(communicator=object())
    except TypeError as e:
        with_bad = str(e)
    assert with_bad and "mpi4py.MPI.Comm" in with_bad
    half.Free()
    return world.rank, world.size


if __name__ == "__main__":
    rank, size = adopted() if sys.argv[1] == "adopted" else world()
    print(f"rank {rank} of {size} ok", flush=True)
