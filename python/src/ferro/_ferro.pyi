"""ferro's C API for the ferro package"""

from collections.abc import Sequence


from typing import Any, Iterator, Optional, Union
from numpy import ndarray, ufunc

class Runtime:
    """
    A ferro runtime: the plugins it loaded, its engines, plan cache and autodiff tape. ferro.runtime() is the default one (plugins from the search path).
    """

    def __init__(self, plugin_paths: Sequence[str] = [], use_environment_path: bool = True, use_default_dir: bool = True, autoload: bool = True, log_level: int | None = None, communicator: object | None = None) -> None:
        """
        plugin_paths are searched first, then FERRO_PLUGIN_PATH (use_environment_path) and lib/ferro/plugins next to libferro (use_default_dir); autoload loads every plugin found; log_level: 0 trace .. 5 off (None: FERRO_LOG_LEVEL, else warn); communicator: an mpi4py.MPI.Comm for the comm family's collectives (None: MPI_COMM_WORLD under mpirun, else this process alone).
        """

    @property
    def epoch(self) -> int: ...

    @property
    def id(self) -> int: ...

    def load_plugin(self, path: str) -> None:
        """Loads one plugin file (a file already loaded changes nothing)."""

    def scan(self) -> tuple:
        """
        Loads every plugin on the search path not loaded yet: (loaded, failed).
        """

    def unload_plugin(self, name: str) -> None: ...

    def rank_size(self) -> tuple:
        """
        (rank, size) of this process in the runtime's communicator (comm family).
        """

    def plan_cache_stats(self) -> dict: ...

    def plan_cache_clear(self) -> None: ...

    def engine_memory(self, engine: str = 'cpu') -> dict: ...

    def engine_memory_reset_peak(self, engine: str = 'cpu') -> None: ...

def default_runtime() -> Runtime:
    """The default runtime, made on first use."""

def version() -> str: ...

def abi_version() -> tuple: ...

class Tensor:
    """
    An n-dimensional array on one engine: numpy's semantics (dtype, shape, broadcasting, promotion), differentiable (requires_grad, backward, grad).
    """

    @property
    def shape(self) -> tuple:
        """The size of each axis."""

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int:
        """The number of elements."""

    @property
    def dtype(self) -> object:
        """numpy's dtype of the elements."""

    @property
    def itemsize(self) -> int: ...

    @property
    def nbytes(self) -> int: ...

    @property
    def strides(self) -> tuple:
        """Bytes to step along each axis (numpy's strides)."""

    @property
    def device(self) -> str:
        """The engine holding the data: 'cpu', 'vulkan:0', 'cuda:0'."""

    @property
    def runtime(self) -> Runtime: ...

    @property
    def requires_grad(self) -> bool:
        """
        Whether ops on it record for backward; settable on leaves of f32, f64, c64, c128.
        """

    @requires_grad.setter
    def requires_grad(self, arg: bool, /) -> None: ...

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by backward (a leaf's), or None."""

    @grad.setter
    def grad(self, value: object | None) -> None: ...

    @property
    def grad_fn(self) -> str | None:
        """
        The op that recorded this tensor ('core.matmul', 'program'), None for a leaf.
        """

    @property
    def tangent(self) -> Tensor | None:
        """Forward mode: the tangent this tensor carries (ferro.jvp), or None."""

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False, create_graph: bool = False) -> None:
        """
        Reverse mode from this tensor into the .grad of the leaves it depends on (gradient: the seed; omitted for one element).
        """

    def detach(self) -> Tensor:
        """The same memory without autograd state (a leaf)."""

    def to(self, device: str) -> Tensor:
        """
        A copy on another engine (ops never move data between engines implicitly).
        """

    def __add__(self, other: object | None) -> Tensor: ...

    def __radd__(self, other: object | None) -> Tensor: ...

    def __sub__(self, other: object | None) -> Tensor: ...

    def __rsub__(self, other: object | None) -> Tensor: ...

    def __mul__(self, other: object | None) -> Tensor: ...

    def __rmul__(self, other: object | None) -> Tensor: ...

    def __truediv__(self, other: object | None) -> Tensor: ...

    def __rtruediv__(self, other: object | None) -> Tensor: ...

    def __matmul__(self, other: object | None) -> Tensor: ...

    def __rmatmul__(self, other: object | None) -> Tensor: ...

    def __pow__(self, other: object | None) -> Tensor: ...

    def __rpow__(self, other: object | None) -> Tensor: ...

    def __eq__(self, other: object | None) -> Tensor: ...

    def __ne__(self, other: object | None) -> Tensor: ...

    def __lt__(self, other: object | None) -> Tensor: ...

    def __le__(self, other: object | None) -> Tensor: ...

    def __gt__(self, other: object | None) -> Tensor: ...

    def __ge__(self, other: object | None) -> Tensor: ...

    def __neg__(self) -> Tensor: ...

    def copy(self) -> Tensor:
        """A copy in new memory (differentiable)."""

    __hash__: None = None

    @property
    def __array_interface__(self) -> dict: ...

    def __dlpack_device__(self) -> tuple: ...

    def __getitem__(self, key: Any) -> Tensor:
        """Basic indexing: integers, slices, None, ... (a view, differentiable)."""

    def __iter__(self) -> Iterator[Tensor]: ...

    def __len__(self) -> int: ...

    def __repr__(self) -> str: ...

    def __str__(self) -> str: ...

    def __bool__(self) -> bool: ...

    def __reduce__(self) -> tuple:
        """
        Pickled as its values (a host copy); unpickled into the default runtime, on the cpu.
        """

    def __float__(self) -> float: ...

    def __int__(self) -> int: ...

    def __complex__(self) -> complex: ...

    def __index__(self) -> int: ...

    def __abs__(self) -> Tensor: ...

    def __pos__(self) -> Tensor: ...

    def __invert__(self) -> Tensor: ...

    def __and__(self, other: Any) -> Tensor: ...

    def __or__(self, other: Any) -> Tensor: ...

    def __array_ufunc__(self, ufunc: ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any: ...

    def numpy(self) -> ndarray:
        """
        The values as a numpy array: a read-only view of a cpu tensor, else a copy.
        """

    def item(self) -> Any:
        """The one element as a Python scalar."""

    def tolist(self) -> Any: ...

    def astype(self, dtype: Any, copy: bool = True) -> Tensor:
        """
        Elements converted to `dtype` (numpy's rules: complex to real drops the imaginary part).
        """

    def reshape(self, *shape: Any) -> Tensor:
        """
        reshape(2, 3) or reshape((2, 3)); -1 infers one size; a view when possible.
        """

    def transpose(self, *axes: Any) -> Tensor:
        """The axes reversed, or permuted as given (a view)."""

    def swapaxes(self, axis1: int, axis2: int) -> Tensor: ...

    def squeeze(self, axis: Optional[Union[int, Sequence[int]]] = None) -> Tensor: ...

    def flatten(self) -> Tensor:
        """A one-dimensional copy."""

    def ravel(self) -> Tensor:
        """One-dimensional: a view when possible."""

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor: ...

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor: ...

    @property
    def T(self) -> Tensor:
        """The axes reversed (numpy's .T)."""

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (a stack of matrices transposed)."""

    @property
    def real(self) -> Tensor:
        """The real part."""

    @property
    def imag(self) -> Tensor:
        """The imaginary part (zeros for real tensors)."""

    def conj(self) -> Tensor: ...

    def conjugate(self) -> Tensor: ...

    def sum(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor: ...

    def mean(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor: ...

    def prod(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor: ...

    def max(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor: ...

    def min(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor: ...

    def any(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor: ...

    def all(self, axis: Optional[Union[int, Sequence[int]]] = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Tensor: ...

    def matmul(self, other: Any) -> Tensor: ...

    def __dlpack__(self: Tensor, *, stream: Any = None, max_version: Optional[tuple] = None, dl_device: Optional[tuple] = None, copy: Optional[bool] = None) -> Any:
        """
        A DLPack capsule sharing the tensor's memory: versioned ("dltensor_versioned") when the
            consumer's max_version is 1.x or later, else the 0.x one. copy=True exports a copy.
            `stream` is accepted for the protocol; ferro's engines finish their work before a call
            returns, so nothing needs synchronising.
        """

    def __array__(self: Tensor, dtype: Any = None, copy: Optional[bool] = None) -> ndarray:
        """
        numpy.asarray(t): a read-only view of a cpu tensor (other engines: a host copy).
        """

def call(op: str, inputs: Sequence[Tensor], attrs: dict = {}, runtime: Runtime | None = None) -> list[Tensor]:
    """
    Calls any op by qualified name ('linalg.svd') and returns its outputs as a list.
    """

def vjp(outputs: Sequence[Tensor], cotangents: Sequence[Tensor | None], inputs: Sequence[Tensor], create_graph: bool = False) -> list[Tensor | None]:
    """
    The cotangents of `inputs` for `outputs` weighted by `cotangents` (None entries: ones for one-element outputs); None where no gradient reaches an input.
    """

def make_dual(primal: Tensor, tangent: Tensor) -> Tensor:
    """Forward mode: `primal` carrying `tangent`."""

def grad_enabled() -> bool: ...

class Program:
    """The op calls one capture recorded (ferro.capture_begin / capture_end)."""

    @property
    def n_inputs(self) -> int: ...

    @property
    def n_outputs(self) -> int: ...

    @property
    def n_steps(self) -> int: ...

    def prepare(self, examples: Sequence[Tensor], max_shapes: Sequence[Sequence[int]] | None = None) -> PreparedProgram:
        """
        The program prepared for inputs like `examples` (dtype and shape; max_shapes: symbolic axes' bounds).
        """

class PreparedProgram:
    """A program prepared for its inputs' signatures; call it on new inputs."""

    def __call__(self, inputs: Sequence[Tensor]) -> list[Tensor]: ...

    def describe(self) -> str:
        """
        The prepared program as JSON (steps, plans, memory; ferro-inspect program reads it).
        """

    def memory(self) -> tuple:
        """
        (bytes of the intermediates as eager calls allocate them, bytes a run keeps for them).
        """

def capture_begin(runtime: Runtime, inputs: Sequence[Tensor]) -> None:
    """
    Starts recording this thread's calls on `runtime`; `inputs` are the program's.
    """

def capture_end(runtime: Runtime, outputs: Sequence[Tensor]) -> Program: ...

def capture_abort() -> None: ...
