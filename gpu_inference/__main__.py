"""`python -m gpu_inference ...`: the `gpu-inference` command line (components.preview.cli)."""

import sys

from components.preview.cli import main

if __name__ == "__main__":
    sys.exit(main())
