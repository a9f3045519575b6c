"""What every Python suite under Tests/ shares: the bookpipe binary under test.

`BOOKPIPE_BIN` names it; without it, the debug build's (`swift build --show-bin-path`). The suites read
`os.environ["BOOKPIPE_BIN"]` once this fixture has made sure it is there and executable.
"""

import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


@pytest.fixture(scope="session", autouse=True)
def bookpipe_binary():
    path = os.environ.get("BOOKPIPE_BIN")
    if not path:
        bin_dir = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.strip()
        path = os.path.join(bin_dir, "bookpipe")
    assert os.access(path, os.X_OK), f"no bookpipe binary at {path}: run `swift build` first"
    os.environ["BOOKPIPE_BIN"] = path
    return path
