"""`python -m components ...`: the `gpu-inference` command line (see components.cli)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
