"""ferro.einsum and einsum_path against numpy, on shared instances too."""
import json
import os

import numpy as np
import pytest

import ferro
from conftest import gradcheck

CASES = ["ij,jk->ik", "ij,jk", "ii->i", "ii", "ij->", "i,i->", "i,j->ij", "...ij,...jk->...ik", "bij,bjk->bik",
         "abc,cd,bde->ae", "ij,jk,kl,lm->im", "iij->j", "ij,ij->ij", "a,b,c->abc"]


def operands_for(subscripts, rng, dtype=np.float64):
    inputs = subscripts.split("->")[0].split(",")
    sizes = {}
    ops = []
    for term in inputs:
        shape = []
        for ch in term.replace("...", "E"):
            if ch == "E":
                shape.extend([2, 3])
            else:
                shape.append(sizes.setdefault(ch, 2 + len(sizes) % 3))
        a = rng.standard_normal(shape).astype(dtype)
        if np.issubdtype(dtype, np.complexfloating):
            a = a + 1j * rng.standard_normal(shape)
        ops.append(a)
    return ops


@pytest.mark.parametrize("subscripts", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_einsum_matches_numpy(subscripts, dtype, rng):
    ops = operands_for(subscripts, rng, dtype)
    want = np.einsum(subscripts, *ops)
    for optimize in ("auto", "greedy", "optimal", False, True):
        got = ferro.einsum(subscripts, *ops, optimize=optimize)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_sublist_form_and_explicit_paths(rng):
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    want = np.einsum("ij,jk,kl->il", a, b, c)
    np.testing.assert_allclose(np.asarray(ferro.einsum(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3])), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ferro.einsum(a, [Ellipsis, 1], b, [1, 2])), np.einsum(a, [Ellipsis, 1], b, [1, 2]),
                               rtol=1e-12)
    path, info = ferro.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
    assert path[0] == "einsum_path" and len(path) == 3
    assert info.flops > 0 and "Optimized FLOP count" in str(info)
    np_path, _ = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
    np.testing.assert_allclose(np.asarray(ferro.einsum("ij,jk,kl->il", a, b, c, optimize=np_path)), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ferro.einsum("ij,jk,kl->il", a, b, c, optimize=path)), want, rtol=1e-12)


def test_memory_limit_slices_and_keeps_values(rng):
    ops = [rng.standard_normal((16, 16)) for _ in range(4)]
    want = np.einsum("ab,bc,cd,da->", *ops)
    _, info = ferro.einsum_path("ab,bc,cd,da->", *ops, memory_limit=1024)
    assert info.slices > 1 and info.working_bytes <= 1024 and info.sliced_labels
    got = ferro.einsum("ab,bc,cd,da->", *ops, memory_limit=1024)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ferro.einsum("ab,bc,cd,da->", *ops, slices=4)), want, rtol=1e-12)


def test_einsum_gradients(rng):
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    gradcheck(lambda x, y, z: ferro.einsum("ij,jk,kl->il", x, y, z), a, b, c)
    gradcheck(lambda x, y, z: ferro.einsum("ij,jk,kl->il", x, y, z, memory_limit=64), a, b, c)


def test_shared_instances(rng):
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "einsum_instances.json")
    if not os.path.exists(path):
        pytest.skip("shared/data/einsum_instances.json is not next to the repository")
    with open(path) as f:
        data = json.load(f)
    instances = data["instances"] if isinstance(data, dict) and "instances" in data else data
    checked = 0
    for inst in instances:
        shapes = inst.get("shapes")
        eq = inst.get("eq") or inst.get("subscripts") or inst.get("equation")
        if not shapes or not eq or sum(np.prod(s) for s in shapes) > 50_000 or len(shapes) > 12:
            continue
        ops = [rng.standard_normal(s) for s in shapes]
        want = np.einsum(eq, *ops, optimize="greedy")
        np.testing.assert_allclose(np.asarray(ferro.einsum(eq, *ops)), want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
        checked += 1
        if checked == 6:
            break
    assert checked > 0


def test_einsum_errors():
    with pytest.raises(ferro.InvalidArgumentError, match="einsum"):
        ferro.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="negative"):
        ferro.einsum(np.ones(2), [-5])
    with pytest.raises(TypeError, match="at least one operand"):
        ferro.einsum("i->i")


def test_einsum_labels_are_letters():
    x, v = np.ones((2, 3)), np.ones(2)
    # numpy refuses digits and punctuation as labels; so does ferro, naming the character.
    for bad, ops, char in (("a1", [x], "'1'"), ("&,a->", [v, v], "'&'"), ("ab,b0->a0", [x, x.T], "'0'")):
        with pytest.raises(ValueError, match="subscripts must be letters"):
            np.einsum(bad, *ops)
        with pytest.raises(ferro.InvalidArgumentError, match=f"{char} is not a label"):
            ferro.einsum(bad, *ops)
    # Letters beyond ASCII stay labels; sublist labels beyond numpy's 0-51 work (numpy refuses them).
    np.testing.assert_allclose(np.asarray(ferro.einsum("αβ->βα", x)), x.T)
    np.testing.assert_allclose(np.asarray(ferro.einsum(x, [100, 7])), x.T)
    with pytest.raises(ValueError):
        np.einsum(x, [100, 7])


def _greedy_cases():
    opt_einsum = pytest.importorskip("opt_einsum")
    from opt_einsum.testing import build_shapes, rand_equation
    from opt_einsum.tests.test_contract import tests
    from opt_einsum.tests.test_paths import path_edge_tests

    cases = [(eq, build_shapes(eq)) for eq in tests]
    cases += [(eq, build_shapes(eq)) for kind, eq, _ in path_edge_tests if kind == "greedy"]
    for seed in range(40):  # larger networks, with output labels and repeated sizes
        eq, shapes = rand_equation(4 + seed % 12, 3, n_out=seed % 3, d_min=2, d_max=5, seed=seed)
        cases.append((eq, shapes))
    return opt_einsum, cases


def test_greedy_matches_opt_einsum():
    """ferro's greedy is opt_einsum's, step for step: the same path on opt_einsum's own test
    expressions, on random networks and on the shared real networks."""
    opt_einsum, cases = _greedy_cases()
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "data", "einsum_instances.json")
    if os.path.exists(path):
        with open(path) as f:
            for inst in json.load(f)["instances"]:
                # ferro refuses digit labels: the subscript digits stand in for them.
                eq = inst["subscripts"].translate({ord("0") + d: 0x2080 + d for d in range(10)})
                cases.append((eq, [tuple(s) for s in inst["shapes"]]))
    for eq, shapes in cases:
        ops = [np.broadcast_to(np.zeros(()), s) for s in shapes]  # only the shapes matter
        want, _ = opt_einsum.contract_path(eq, *shapes, optimize="greedy", shapes=True)
        got, _ = ferro.einsum_path(eq, *ops, optimize="greedy")
        if len(shapes) > 1:
            assert [tuple(p) for p in got[1:]] == [tuple(p) for p in want], eq
