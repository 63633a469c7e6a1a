"""Entry point of the gpu-inference component package (see PulumiPlugin.yaml)."""

import sys
from pathlib import Path

# The repository root holds the `components` package; the root's own __main__.py is the stack
# program, so the plugin lives in this folder of its own.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from components.provider import main

if __name__ == "__main__":
    main()
