"""``python -m ferro.inspect ARGS``: runs ferro-inspect, the inspector of the ferro build this
package was built against (docs/inspector.md): list, doctor, show, check, ops, program."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import List, Optional


def inspector_path() -> str:
    from . import _build_info
    if os.access(_build_info.inspector, os.X_OK):
        return _build_info.inspector
    found = shutil.which("ferro-inspect")
    if found is None:
        raise FileNotFoundError(f"ferro-inspect is neither at {_build_info.inspector} (the build this package was built "
                                "against) nor on PATH")
    return found


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        path = inspector_path()
    except FileNotFoundError as e:
        print(f"python -m ferro.inspect: {e}", file=sys.stderr)
        return 3
    return subprocess.call([path, *args])


if __name__ == "__main__":
    sys.exit(main())
