"""ferro.fft against numpy.fft, with gradients."""
import numpy as np
import pytest

import ferro
from conftest import gradcheck

NORMS = [None, "backward", "ortho", "forward"]


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("norm", NORMS)
def test_one_axis_transforms(name, norm, rng):
    real = name in ("rfft", "ihfft")
    x = rng.standard_normal((3, 10))
    if not real:
        x = x + 1j * rng.standard_normal((3, 10))
    for n, axis in ((None, -1), (16, -1), (7, 1), (None, 0), (4, 0)):
        got = getattr(ferro.fft, name)(x, n=n, axis=axis, norm=norm)
        want = getattr(np.fft, name)(x, n=n, axis=axis, norm=norm)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize("norm", NORMS)
def test_many_axes_transforms(name, norm, rng):
    x = rng.standard_normal((4, 6, 5))
    if not name.startswith("r"):
        x = x + 1j * rng.standard_normal(x.shape)
    for kwargs in ({}, {"axes": (0, 2)}, {"s": (8, 4), "axes": (1, 2)}, {"s": (3, 4)} if "2" in name else {"s": (3, 4, 2), "axes": (0, 1, 2)}):
        got = getattr(ferro.fft, name)(x, norm=norm, **kwargs)
        want = getattr(np.fft, name)(x, norm=norm, **kwargs)
        assert got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["hfft2", "ihfft2", "hfftn", "ihfftn"])
@pytest.mark.parametrize("norm", NORMS)
def test_hermitian_many_axes_transforms_match_scipy(name, norm, rng):
    scipy_fft = pytest.importorskip("scipy.fft")
    x = rng.standard_normal((4, 6, 5))
    if name.startswith("h"):
        x = x + 1j * rng.standard_normal(x.shape)
    cases = ({}, {"axes": (0, 2)}, {"axes": (2, 0)}, {"s": (8, 4), "axes": (1, 2)}, {"s": (3, 7), "axes": (0, 1)})
    if name.endswith("n"):
        cases += ({"s": (3, 4, 2), "axes": (0, 1, 2)}, {"s": (9,)}, {"axes": (1,)})
    for kwargs in cases:
        got = getattr(ferro.fft, name)(x, norm=norm, **kwargs)
        want = getattr(scipy_fft, name)(x, norm=norm, **kwargs)
        assert got.shape == want.shape and got.dtype == want.dtype, kwargs
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
    # Single precision stays single.
    assert getattr(ferro.fft, name)(x.astype(np.complex64 if name.startswith("h") else np.float32)).dtype == (
        np.float32 if name.startswith("h") else np.complex64)


@pytest.mark.parametrize("fn", [lambda x: ferro.fft.hfft2(x), lambda x: ferro.fft.hfftn(x, s=(5, 4), norm="ortho"),
                                lambda x: ferro.fft.ihfft2(x.real, axes=(1, 0)),
                                lambda x: ferro.fft.ihfftn(x.real, s=(2, 9), norm="forward")],
                         ids=["hfft2", "hfftn", "ihfft2", "ihfftn"])
def test_hermitian_many_axes_gradients(fn, rng):
    gradcheck(fn, rng.standard_normal((3, 8)) + 1j * rng.standard_normal((3, 8)), rtol=1e-6, atol=1e-8)


def test_helpers_match_numpy(rng):
    for n in (1, 7, 8):
        np.testing.assert_allclose(np.asarray(ferro.fft.fftfreq(n, 0.5)), np.fft.fftfreq(n, 0.5))
        np.testing.assert_allclose(np.asarray(ferro.fft.rfftfreq(n, 0.5)), np.fft.rfftfreq(n, 0.5))
    x = rng.standard_normal((5, 6))
    for axes in (None, 0, (1,)):
        np.testing.assert_array_equal(np.asarray(ferro.fft.fftshift(x, axes)), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(np.asarray(ferro.fft.ifftshift(x, axes)), np.fft.ifftshift(x, axes))


@pytest.mark.parametrize("fn", [lambda x: ferro.fft.fft(x, n=12), lambda x: ferro.fft.rfft(x, norm="ortho"),
                                lambda x: ferro.fft.irfft(ferro.fft.rfft(x) * 2), lambda x: ferro.fft.fft2(x),
                                lambda x: ferro.fft.fftshift(ferro.fft.rfftn(x))],
                         ids=["fft", "rfft", "irfft", "fft2", "rfftn_shift"])
def test_fft_gradients(fn, rng):
    gradcheck(fn, rng.standard_normal((3, 8)), rtol=1e-6, atol=1e-8)


def test_fft_errors_name_the_op_and_argument():
    with pytest.raises(ferro.InvalidArgumentError, match="fft.fft.*norm"):
        ferro.fft.fft(np.ones(4), norm="sideways")
    with pytest.raises(ferro.InvalidArgumentError, match="fft.rfft"):
        ferro.fft.rfft(np.ones(4) + 1j)
