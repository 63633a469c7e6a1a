"""`python -m components ...`: the `gpu-inference` command line (see components.preview.cli)."""

from .preview.cli import run

if __name__ == "__main__":
    run()
