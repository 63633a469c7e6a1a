"""Write the policy pack as one self-contained folder, for `pulumi policy publish`.

    python policy/bundle.py OUT_DIR
    cd OUT_DIR && pulumi policy publish ORG

`pulumi policy publish` uploads the pack's folder and nothing else (a .tgz of the working
directory: pulumi `pkg/backend/httpstate/policypack.go`, `archive.TGZ(op.PlugCtx.Pwd, ...)`), and
every machine that runs the published pack installs only its `requirements.txt`. In a clone the
pack imports the placement check from the repository's `components/`; the folder written here
carries the pure parts it uses (`components/check`, `components/model` and the package's lazy
`__init__.py`, which import no Pulumi) beside the pack's own files, where the pack's folder on
`sys.path` finds them. OUT_DIR is made anew (an existing one is replaced).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

PACK = Path(__file__).resolve().parent
ROOT = PACK.parent
PACK_FILES = ("PulumiPolicy.yaml", "__main__.py", "gpu_inference_policies.py", "requirements.txt")
LIBRARY = ("components/__init__.py", "components/py.typed", "components/check", "components/model")


def bundle(out: Path) -> list[Path]:
    """Write the pack into `out`; return the files written, sorted."""
    if out.resolve() in (PACK, ROOT) or PACK in out.resolve().parents:
        raise ValueError(f"{out}: write the bundle outside policy/ (e.g. build/policy-pack)")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in PACK_FILES:
        shutil.copy2(PACK / name, out / name)
    shutil.copytree(PACK / "config", out / "config")
    for part in LIBRARY:
        source, target = ROOT / part, out / part
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, target)
    return sorted(p for p in out.rglob("*") if p.is_file())


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python policy/bundle.py OUT_DIR", file=sys.stderr)
        return 2
    files = bundle(Path(argv[0]))
    print(f"wrote {len(files)} files to {argv[0]}: cd {argv[0]} && pulumi policy publish ORG")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
