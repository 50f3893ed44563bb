"""Zero-copy exchange with numpy and DLPack producers, and the lifetime of shared memory."""
import gc
import threading
import weakref

import numpy as np
import pytest

import ferro


def ptr(a):
    return a.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64", "bool"])
def test_asarray_shares_numpy_memory(dtype):
    a = np.arange(12).reshape(3, 4).astype(dtype)
    t = ferro.asarray(a)
    assert t._data_ptr == ptr(a) and t.dtype == a.dtype
    back = np.asarray(t)
    assert ptr(back) == ptr(a) and not back.flags.writeable
    np.testing.assert_array_equal(back, a)


@pytest.mark.parametrize("view", [lambda a: a[::2, 1:], lambda a: a.T, lambda a: a[::-1, ::-2], lambda a: a[:, 2]])
def test_strided_views_are_borrowed_as_they_are(view):
    base = np.arange(30.0).reshape(5, 6)
    a = view(base)
    t = ferro.asarray(a)
    assert t._data_ptr == ptr(a) and t.strides == a.strides
    np.testing.assert_array_equal(np.asarray(t + 0), a)
    np.testing.assert_array_equal(np.asarray(t), a)


def test_writes_to_the_numpy_array_are_seen_as_with_torch_from_numpy():
    a = np.zeros(3)
    t = ferro.asarray(a)
    a[1] = 5
    assert t.tolist() == [0.0, 5.0, 0.0]


@pytest.mark.parametrize("dtype,widened", [("int32", "int64"), ("uint8", "int64"), ("int16", "int64"),
                                           ("float16", "float32")])
def test_dtypes_ferro_has_not_are_widened_with_a_copy(dtype, widened):
    a = np.arange(5).astype(dtype)
    t = ferro.asarray(a)
    assert t.dtype == widened and t._data_ptr != ptr(a)
    np.testing.assert_array_equal(np.asarray(t), a.astype(widened))
    with pytest.raises(ValueError, match="copy=False"):
        ferro.asarray(a, copy=False)


def test_refused_dtypes_and_copy_flags():
    with pytest.raises(TypeError, match="uint64 has no ferro dtype"):
        ferro.asarray(np.arange(3, dtype=np.uint64))
    with pytest.raises(TypeError, match="has no ferro dtype"):
        ferro.asarray(np.array(["a"]))
    a = np.arange(4.0)
    assert ferro.asarray(a, copy=True)._data_ptr != ptr(a)
    assert ferro.array(a)._data_ptr != ptr(a)
    assert ferro.asarray(a, copy=False)._data_ptr == ptr(a)
    big_endian = a.astype(">f8")
    np.testing.assert_array_equal(np.asarray(ferro.asarray(big_endian)), a)
    assert ferro.asarray([[1, 2], [3, 4]]).dtype == np.int64
    assert ferro.asarray(2.5).shape == () and ferro.asarray([True]).dtype == np.bool_
    assert ferro.asarray(a, dtype="float32").dtype == np.float32


def test_borrowed_memory_lives_as_long_as_the_tensor():
    a = np.arange(1000.0)
    ref = weakref.ref(a)
    t = ferro.asarray(a)[10:20]
    del a
    gc.collect()
    assert t.tolist() == [float(i) for i in range(10, 20)]
    del t
    gc.collect()
    ferro._ferro._drop_pending_owners()
    assert ref() is None


def test_numpy_view_keeps_the_tensor_alive():
    a = np.asarray(ferro.arange(5.0) * 2)  # the tensor is only referenced by the array
    gc.collect()
    np.testing.assert_array_equal(a, np.arange(5.0) * 2)


@pytest.mark.parametrize("max_version,name", [(None, "dltensor"), ((1, 0), "dltensor_versioned"),
                                              ((1, 1), "dltensor_versioned"), ((0, 8), "dltensor")])
def test_dlpack_capsules_follow_the_consumers_max_version(max_version, name):
    t = ferro.arange(6.0).reshape(2, 3)
    capsule = t.__dlpack__(max_version=max_version) if max_version else t.__dlpack__()
    assert f'"{name}"' in repr(capsule)
    assert t.__dlpack_device__() == (1, 0)


def test_numpy_from_dlpack_shares_memory_both_ways():
    t = ferro.arange(6.0).reshape(2, 3).T
    a = np.from_dlpack(t)
    assert ptr(a) == t._data_ptr and a.strides == t.strides
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3).T)
    back = ferro.from_dlpack(a)
    assert back._data_ptr == t._data_ptr
    copied = np.from_dlpack(t, copy=True)
    assert ptr(copied) != t._data_ptr
    np.testing.assert_array_equal(copied, a)
    with pytest.raises(BufferError, match="not"):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError, match="no __dlpack__"):
        ferro.from_dlpack([1, 2])


def test_device_tensors_copy_to_numpy_and_refuse_dlpack():
    vulkan = [e.name for e in ferro.engines() if e.name.startswith("vulkan")]
    if not vulkan:
        pytest.skip("no vulkan engine (lavapipe) here")
    t = ferro.asarray(np.arange(4.0), device=vulkan[0])
    assert t.device == vulkan[0] and t.__dlpack_device__()[0] == 7
    np.testing.assert_array_equal(np.asarray(t), np.arange(4.0))  # a host copy
    with pytest.raises(ValueError, match="copy=False"):
        t.__array__(copy=False)
    with pytest.raises(BufferError, match="vulkan|address"):
        t.__dlpack__()


def test_torch_round_trip_without_copies():
    torch = pytest.importorskip("torch")
    x = torch.arange(12, dtype=torch.float64).reshape(3, 4)[:, 1:]
    t = ferro.from_dlpack(x)
    assert t._data_ptr == x.data_ptr() and t.shape == (3, 3)
    assert ferro.asarray(x)._data_ptr == x.data_ptr()
    y = torch.from_dlpack(t * 2)
    np.testing.assert_array_equal(y.numpy(), x.numpy() * 2)
    z = t + 1
    assert torch.from_dlpack(z).data_ptr() == z._data_ptr
    # a dtype ferro has not is converted (a copy)
    assert ferro.asarray(torch.arange(3, dtype=torch.int32)).dtype == np.int64
    c = torch.randn(3, dtype=torch.complex128)
    np.testing.assert_array_equal(np.asarray(ferro.from_dlpack(c)), c.numpy())


def test_jax_round_trip_without_copies():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    x = jnp.arange(12.0).reshape(3, 4)
    t = ferro.from_dlpack(x)
    assert t._data_ptr == x.unsafe_buffer_pointer() and t.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(t), np.asarray(x))
    y = t * 2
    back = jnp.from_dlpack(y)
    assert back.unsafe_buffer_pointer() == y._data_ptr
    np.testing.assert_array_equal(np.asarray(back), np.asarray(x) * 2)


def test_threads_releasing_borrowed_tensors():
    """Tensors over numpy memory are released on worker threads inside ferro calls; the arrays
    go back to Python without deadlock and without leaking."""
    arrays = [np.full(100_000, float(i)) for i in range(8)]
    results = [None] * 8

    def work(i):
        t = ferro.asarray(arrays[i])
        for _ in range(20):
            t = (t + 1.0) * 1.0
        results[i] = float(t.sum())

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert results == [100_000 * (i + 20.0) for i in range(8)]
