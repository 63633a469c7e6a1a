"""Import costs stay where they belong: the library never imports a cloud SDK the stack does not
use (each check in a fresh interpreter)."""

import json
import subprocess
import sys
from typing import Any

from tests.conftest import ROOT


def probe(code: str) -> Any:
    """What `code`, run in a fresh interpreter in the project, prints last (JSON)."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def loaded_sdks(code: str) -> list[str]:
    return probe(
        "import sys\n"
        f"{code}\n"
        "import json\n"
        "clouds = ('pulumi_aws', 'pulumi_gcp', 'pulumi_azure_native')\n"
        "print(json.dumps([m for m in clouds if m in sys.modules]))\n"
    )


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


def test_an_aks_stack_imports_only_the_azure_sdk():
    code = (
        "from components.preview.preview import preview\n"
        "import tempfile, pathlib\n"
        "preview('aks-dev', out_dir=pathlib.Path(tempfile.mkdtemp()), project_dir=pathlib.Path('.'))"
    )
    assert loaded_sdks(code) == ["pulumi_azure_native"]


def test_an_aks_stack_loads_only_the_containerservice_module_of_the_azure_sdk():
    """pulumi-azure-native is large (~250 services): its top package registers each service as a
    lazy module (pulumi's `_LazyModule`, loaded on first use), and an AKS stack must load no
    service but `containerservice`."""
    services = probe(
        "from components.preview.preview import preview\n"
        "import tempfile, pathlib, sys, json\n"
        "preview('aks-nap', out_dir=pathlib.Path(tempfile.mkdtemp()), project_dir=pathlib.Path('.'))\n"
        "print(json.dumps(sorted({n.split('.')[1] for n, m in list(sys.modules.items())"
        " if n.startswith('pulumi_azure_native.') and type(m).__name__ != '_LazyModule'})))\n"
    )
    assert set(services) == {"containerservice", "_utilities", "provider"}


def loaded_modules(stack: str, names: tuple[str, ...]) -> list[str]:
    return probe(
        "from components.preview.preview import preview\n"
        "import tempfile, pathlib, sys, json\n"
        f"preview({stack!r}, out_dir=pathlib.Path(tempfile.mkdtemp()), project_dir=pathlib.Path('.'))\n"
        f"print(json.dumps([n for n in {names!r} if n in sys.modules]))\n"
    )


# The SDK modules whose few types we register directly (components/kube/objects.py, the GKE
# NodePool, the GKE cluster lookup, the Helm Release): 0.05-0.3 s each to import (helm.v3 with
# `requests`), for every preview and up.
DIRECT = (
    "pulumi_kubernetes.core.v1._inputs",
    "pulumi_gcp.container._inputs",
    "pulumi_kubernetes.helm.v3._inputs",
    "requests",
)


def test_a_gke_stack_on_its_cluster_loads_none_of_the_sdk_modules_we_register_past():
    # gke-esc: an existing cluster, a GKE node pool, Helm releases, namespaces, a service account.
    assert loaded_modules("gke-esc", DIRECT) == []


def test_an_on_prem_stack_loads_none_of_them_either():
    # onprem: node patches over node reads, a ConfigMapPatch, namespaces, service accounts.
    assert loaded_modules("onprem", DIRECT) == []
