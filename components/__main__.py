"""`python -m components ...`: the `gpu-inference` command line (see components.preview.cli)."""

import sys

from .preview.cli import main

if __name__ == "__main__":
    sys.exit(main())
