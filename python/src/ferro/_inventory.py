"""What a runtime holds, from one consistent snapshot: plugins, engines, families, ops, and the
diagnostics of plugins that did not load (ferro-inspect has the same from outside)."""
from __future__ import annotations

from types import SimpleNamespace
from typing import List, Optional

from . import _ferro


def _table(key: str, runtime=None) -> List[SimpleNamespace]:
    rt = runtime if runtime is not None else _ferro.default_runtime()
    return [SimpleNamespace(**entry) for entry in rt._inventory()[key]]


def plugins(runtime=None) -> List[SimpleNamespace]:
    """The loaded plugins: name, version, description, path, abi, builtin, ..."""
    return _table("plugins", runtime)


def engines(runtime=None) -> List[SimpleNamespace]:
    """The engines with a device: name ("cpu", "vulkan:0"), kind, device, memory_bytes, dtypes, details."""
    return _table("engines", runtime)


def engine_kinds(runtime=None) -> List[SimpleNamespace]:
    """Every engine kind a plugin provides, with its device count and, where it found none, why."""
    return _table("engine_kinds", runtime)


def families(runtime=None) -> List[SimpleNamespace]:
    return _table("families", runtime)


def modules(runtime=None) -> List[SimpleNamespace]:
    """Each family's module on each engine: available, or the reason it declined."""
    return _table("modules", runtime)


def ops(family: Optional[str] = None, runtime=None) -> List[SimpleNamespace]:
    """Every op (of one family): name, doc, attrs (name, type, default, doc), dtypes, rules."""
    table = _table("ops", runtime)
    return [op for op in table if family is None or op.family == family]


def diagnostics(runtime=None) -> List[SimpleNamespace]:
    """Plugin files that did not load: file, stage, code and message."""
    return _table("diagnostics", runtime)


def search_path(runtime=None) -> List[SimpleNamespace]:
    """The plugin search path: each directory with its origin and whether it exists."""
    return _table("search_dirs", runtime)
