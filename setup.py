"""The wheel's one import name: the repository's `components/` folder ships as `gpu_inference`.

The folder keeps its name in the repository (its layers and `lint-imports` contracts are named
after it), and its modules import one another relatively, so mapping the folder is all it takes;
`gpu_inference/` beside it is the checkout's shim to the same objects and is not shipped. The
packages are found from the folder, so a new subpackage needs no edit here.
"""

from setuptools import find_packages, setup

setup(
    package_dir={"gpu_inference": "components"},
    packages=[
        "gpu_inference" + name.removeprefix("components")
        for name in find_packages(include=["components", "components.*"])
    ],
    package_data={"gpu_inference": ["py.typed"]},
)
