"""Runtimes, the inventory, ops by name, errors, comm in one process, compile, threads, the
inspector."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import ferro
from ferro import _build_info

CORPUS = os.path.join(_build_info.library_dir, "..", "tests", "fixtures", "corpus")


def test_inventory_lists_what_is_installed():
    names = {p.name for p in ferro.plugins()}
    assert {"linalg", "fft", "einsum", "comm"} <= names
    assert any(e.name == "cpu" for e in ferro.engines())
    assert {f.id for f in ferro.families()} >= {"core", "linalg", "fft", "einsum", "comm"}
    assert any(m.family == "linalg" and m.engine == "cpu" and m.available for m in ferro.modules())
    svd = next(op for op in ferro.op_schemas("linalg") if op.name == "linalg.svd")
    assert svd.n_outputs == 3 and svd.has_vjp and "f64" in svd.dtypes
    assert [a["name"] for a in svd.attrs] == ["full_matrices", "eps"]
    assert any(d.origin == "next to libferro" for d in ferro.search_path())
    for kind in ferro.engine_kinds():
        assert kind.device_count > 0 or kind.reason  # no device: the reason is given
    assert "linalg.svd" in ferro.describe("linalg.svd") and "full_matrices" in ferro.linalg.svd.__doc__


def test_broken_plugins_are_diagnostics_not_crashes():
    if not os.path.isdir(CORPUS):
        pytest.skip("the fixture corpus is built with the C++ tests")
    rt = ferro.Runtime(plugin_paths=[CORPUS], use_default_dir=False, use_environment_path=False, autoload=False)
    for name in ("garbage", "empty", "elf32", "abi_major", "entry_throws", "truncated"):
        with pytest.raises(ferro.Error) as err:
            rt.load_plugin(os.path.join(CORPUS, f"libferro_fixture_{name}.so"))
        assert f"libferro_fixture_{name}.so" in str(err.value)
    diagnostics = ferro.diagnostics(rt)
    assert len(diagnostics) == 6 and all(d.stage and d.message for d in diagnostics)
    t = ferro.asarray(np.ones(3), runtime=rt)
    assert (t + t).tolist() == [2.0, 2.0, 2.0]  # the runtime still works
    with pytest.raises(ferro.NotFoundError, match="linalg.svd"):
        ferro.call("linalg.svd", t.reshape(3, 1), runtime=rt)


def test_call_any_op_by_name_with_keyword_attributes(rng):
    a = rng.standard_normal((4, 3))
    r = ferro.call("linalg.qr", a, mode="r")
    np.testing.assert_allclose(np.abs(np.asarray(r)), np.abs(np.linalg.qr(a, mode="r")), atol=1e-12)
    u, s, vh = ferro.call("linalg.svd", a, full_matrices=False)
    assert s.shape == (3,)
    z = ferro.call("core.zeros", shape=[2, 2], dtype="c64")
    assert z.dtype == np.complex64


@pytest.mark.parametrize("action,error,pattern", [
    (lambda: ferro.call("linalg.nope", np.ones((2, 2))), ferro.NotFoundError, "linalg.nope"),
    (lambda: ferro.call("linalg.svd", np.ones((2, 2)), bogus=1), ferro.InvalidArgumentError, "unknown attribute 'bogus'"),
    (lambda: ferro.call("linalg.svd", np.ones((2, 2)), full_matrices="yes"), ferro.InvalidArgumentError, "full_matrices"),
    (lambda: ferro.linalg.inv(np.ones((2, 3))), ferro.InvalidArgumentError, r"linalg.inv: input 0 must be square"),
    (lambda: ferro.asarray(np.ones(2)) + ferro.asarray(np.ones(3)), ferro.InvalidArgumentError, "broadcast"),
    (lambda: ferro.zeros(2, dtype="float16"), TypeError, "float16"),
    (lambda: ferro.call("linalg.svd", np.ones((2, 2)), full_matrices=object()), TypeError, "full_matrices"),
    (lambda: ferro.asarray([1.0]).to("vulkan:9"), ferro.Error, "vulkan:9"),
])
def test_errors_are_exceptions_with_the_librarys_message(action, error, pattern):
    with pytest.raises(error, match=pattern) as info:
        action()
    if isinstance(info.value, ferro.Error):  # the class is the one of the status code
        assert type(info.value).__name__.upper() == info.value.code_name.replace("_", "") + "ERROR"


def test_error_classes_are_builtin_exceptions_too():
    assert issubclass(ferro.InvalidArgumentError, ValueError)
    assert issubclass(ferro.NotFoundError, LookupError)
    assert issubclass(ferro.UnimplementedError, NotImplementedError)
    assert issubclass(ferro.DeadlineExceededError, TimeoutError)
    try:
        ferro.linalg.inv(np.ones((2, 3)))
    except ferro.Error as e:
        assert e.code == 3 and e.code_name == "INVALID_ARGUMENT"


def test_comm_in_one_process():
    assert ferro.comm.rank() == 0 and ferro.comm.size() == 1
    x = np.arange(4.0)
    np.testing.assert_array_equal(np.asarray(ferro.comm.allreduce(x)), x)
    np.testing.assert_array_equal(np.asarray(ferro.comm.allgather(x)), x[None])
    np.testing.assert_array_equal(np.asarray(ferro.comm.broadcast(x, root=0)), x)
    ferro.comm.barrier()
    g = ferro.grad(lambda t: (ferro.comm.allreduce(t) ** 2).sum())(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * x)
    with pytest.raises(ferro.InvalidArgumentError, match="root"):
        ferro.comm.broadcast(x, root=3)


def test_compile_captures_once_per_signature(rng):
    calls = []

    @ferro.compile
    def step(x, w, scale):
        calls.append(1)
        return ferro.tanh(x @ w) * scale, (x * x).sum()

    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    first = step(x, w, 2.0)
    second = step(x * 2, w, 2.0)
    assert len(calls) == 1 and step.cache_size == 1
    np.testing.assert_allclose(np.asarray(second[0]), np.tanh((x * 2) @ w) * 2.0, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(first[1]), (x * x).sum(), rtol=1e-14)
    step(x, w, 3.0)  # another constant: another capture
    step(rng.standard_normal((5, 3)), w, 2.0)  # another shape
    assert len(calls) == 3 and step.cache_size == 3
    assert '"steps"' in step.describe(x, w)
    xg = ferro.asarray(x).requires_grad_()
    loss = step(xg, w, 2.0)[0].sum()
    loss.backward()
    expected = ferro.grad(lambda v: (ferro.tanh(v @ w) * 2.0).sum())(x)
    np.testing.assert_allclose(np.asarray(xg.grad), np.asarray(expected), rtol=1e-13)


def test_compile_refuses_what_a_replay_could_not_repeat():
    @ferro.compile
    def reads_values(x):
        return x * float(x.sum())

    with pytest.raises(ferro.FailedPreconditionError):
        reads_values(np.ones(3))
    assert (ferro.asarray(np.ones(2)) * 2).tolist() == [2.0, 2.0]  # the capture was dropped

    @ferro.compile
    def scaled(x, factors):
        return x * factors[0]

    with pytest.raises(TypeError, match="argument 1 \\(list\\) is neither a tensor nor hashable"):
        scaled(np.ones(2), [2.0])
    assert scaled(np.ones(2), (2.0,)).tolist() == [2.0, 2.0]


def test_threads_calling_into_one_runtime(rng):
    a = rng.standard_normal((64, 64))
    want = np.linalg.svd(a, compute_uv=False)
    errors = []

    def work(seed):
        try:
            local = np.random.default_rng(seed).standard_normal((32, 32))
            for _ in range(10):
                s = ferro.linalg.svd(a, compute_uv=False)
                np.testing.assert_allclose(np.asarray(s), want, rtol=1e-12)
                x = ferro.asarray(local).requires_grad_()
                (x @ x).sum().backward()
                ones = np.ones((32, 32))
                np.testing.assert_allclose(np.asarray(x.grad), ones @ local.T + local.T @ ones, rtol=1e-12)
                np.testing.assert_allclose(np.asarray(ferro.einsum("ij,jk->ik", local, local)), local @ local, rtol=1e-12)
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_long_calls_release_the_gil():
    a = ferro.randn((1200, 1200), seed=1)
    counter = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counter[0] += 1

    t = threading.Thread(target=count)
    t.start()
    try:
        before = counter[0]
        for _ in range(3):
            ferro.linalg.svd(a, compute_uv=False)
        during = counter[0] - before
    finally:
        stop.set()
        t.join()
    assert during > 1000  # the counting thread ran while ferro computed


def test_python_m_ferro_inspect_forwards_to_the_inspector():
    out = subprocess.run([sys.executable, "-m", "ferro.inspect", "list"], capture_output=True, text=True)
    assert out.returncode == 0 and "linalg" in out.stdout
    bad = subprocess.run([sys.executable, "-m", "ferro.inspect", "no-such-command"], capture_output=True, text=True)
    assert bad.returncode == 2
