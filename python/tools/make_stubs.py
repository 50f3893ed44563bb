"""Writes src/ferro/_ferro.pyi: nanobind's stubgen over ferro._ferro as the package leaves it
(with the methods the Python layer adds to Tensor). Run with the package installed:
`.venv-python/bin/python python/tools/make_stubs.py`; tests/test_stubs.py checks the committed
file is current."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def generate(output: str) -> None:
    # Not from the package's folder: its inspect.py would shadow the standard library's.
    subprocess.run([sys.executable, "-m", "nanobind.stubgen", "-q", "-m", "ferro._ferro", "-o", output,
                    "-p", os.path.join(HERE, "..", "stub_patterns.txt")], check=True, cwd=tempfile.gettempdir())


if __name__ == "__main__":
    generate(os.path.join(HERE, "..", "src", "ferro", "_ferro.pyi"))
