"""`python -m overlap_crawl ARGS...` runs the installed binary."""

import os
import sys

from ._binary import binary


def main() -> None:
    path = binary()
    if sys.platform == "win32":
        import subprocess

        sys.exit(subprocess.run([path, *sys.argv[1:]]).returncode)
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
