"""Where the wheel put the `overlap` binary, and running it."""

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

_NAME = "overlap.exe" if sys.platform == "win32" else "overlap"


def _candidates():
    # The wheel installs the binary as a script of the environment it is
    # installed in: the scheme's scripts directory, or the user scheme's
    # with `pip install --user`, or `TARGET/bin` with `pip install
    # --target TARGET` (beside this package's parent directory).
    yield Path(sysconfig.get_path("scripts")) / _NAME
    user_scheme = {"nt": "nt_user", "posix": "posix_user"}.get(os.name)
    if sys.platform == "darwin" and sys._framework:  # type: ignore[attr-defined]
        user_scheme = "osx_framework_user"
    if user_scheme in sysconfig.get_scheme_names():
        yield Path(sysconfig.get_path("scripts", scheme=user_scheme)) / _NAME
    yield Path(__file__).resolve().parent.parent / "bin" / _NAME


def binary() -> str:
    """The path of the installed `overlap` binary.

    Looks where the wheel installs it first, then on PATH; raises
    FileNotFoundError when there is none."""
    for path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    found = shutil.which(_NAME)
    if found:
        return found
    raise FileNotFoundError(
        "no overlap binary: install the overlap-crawl wheel in this environment, "
        "or put overlap on PATH"
    )


def run(*args: str, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    """Runs `overlap ARGS...` and returns what it did.

    With `check` (the default) an exit code other than 0 raises
    `subprocess.CalledProcessError`, whose `stderr` holds the tool's one
    line when `capture_output=True` is given. Exit code 2 is an error
    (a bad flag, a missing file, a damaged analysis); 3 a run that
    completed under `--strict` with records skipped. Other keyword
    arguments go to `subprocess.run`."""
    return subprocess.run([binary(), *map(str, args)], check=check, **kwargs)
