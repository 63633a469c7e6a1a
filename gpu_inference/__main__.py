"""`python -m gpu_inference ...` and the `gpu-inference` script (`run`): the command line
(components.preview.cli). In the wheel, `gpu_inference` is the `components/` folder itself and
this module is components/__main__.py, which holds the same `run`."""

from components.preview.cli import run

if __name__ == "__main__":
    run()
