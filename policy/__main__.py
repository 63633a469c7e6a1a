"""The gpu-inference policy pack: `pulumi preview --policy-pack ./policy` from the repository root.

Constructing the PolicyPack starts the analyzer's gRPC server and blocks, so this file does that
and nothing else; the policies live in `gpu_inference_policies.py` (importable without side
effects, and tested there). Pulumi runs this directory with `runpy.run_path`, which puts it on
sys.path.
"""

from gpu_inference_policies import PACK_DESCRIPTION, PACK_DISPLAY_NAME, PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name=PACK_NAME,
    policies=POLICIES,
    enforcement_level=EnforcementLevel.MANDATORY,
    description=PACK_DESCRIPTION,
    display_name=PACK_DISPLAY_NAME,
)
