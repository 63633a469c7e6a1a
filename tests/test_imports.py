"""Import costs stay where they belong: the library never imports a cloud SDK the stack does not
use (each check in a fresh interpreter)."""

import json
import subprocess
import sys

from tests.conftest import ROOT


def loaded_sdks(code: str) -> list[str]:
    probe = (
        "import sys\n"
        f"{code}\n"
        "import json\n"
        "print(json.dumps([m for m in ('pulumi_aws', 'pulumi_gcp') if m in sys.modules]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_components_imports_no_cloud_sdk():
    assert (
        loaded_sdks("import components\nfrom components import Placement, InferenceService") == []
    )


def test_a_gke_stack_never_imports_the_aws_sdk():
    code = (
        "from components.preview.preview import preview\n"
        "import tempfile, pathlib\n"
        "preview('gke-dev', out_dir=pathlib.Path(tempfile.mkdtemp()), project_dir=pathlib.Path('.'))"
    )
    assert loaded_sdks(code) == ["pulumi_gcp"]


def test_an_eks_stack_never_imports_the_gcp_sdk():
    code = (
        "from components.preview.preview import preview\n"
        "import tempfile, pathlib\n"
        "preview('eks-prod', out_dir=pathlib.Path(tempfile.mkdtemp()), project_dir=pathlib.Path('.'))"
    )
    assert loaded_sdks(code) == ["pulumi_aws"]


def test_an_on_prem_stack_imports_neither():
    code = (
        "from components.preview.preview import preview\n"
        "import tempfile, pathlib\n"
        "preview('onprem', out_dir=pathlib.Path(tempfile.mkdtemp()), project_dir=pathlib.Path('.'))"
    )
    assert loaded_sdks(code) == []


def test_import_gpu_inference_imports_no_cloud_sdk():
    assert loaded_sdks("import gpu_inference\nfrom gpu_inference import Placement, check") == []
