"""A Helm chart given as a local path (air-gapped clusters, tests): what makes a path one.

Pure: reads the file system, writes nothing, imports no Pulumi. pulumi-kubernetes' `helm.v3.Release`
installs a chart from a path when no repository is given (provider/pkg/provider/helm_release.go
`locateChart` / `localChart` at v4.32.0: a directory counts only if it holds `Chart.yaml`; a relative
path is read from the program's directory, the project directory). Refusing a bad path here gives
one clear error before anything is registered, instead of a failed `pulumi up` half-way.
"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Optional

from ..errors import InputError, show

ARCHIVE_SUFFIXES = (".tgz", ".tar.gz")
LOCAL_CHART_RULE = (
    "a chart directory holding Chart.yaml, or a chart archive (.tgz, as `helm package` makes); "
    "a relative path is read from the project directory"
)


def local_chart_problem(path: str, base: Optional[Path] = None) -> Optional[str]:
    """What is wrong with `path` as a local chart (None when it is one). `base`: the directory a
    relative path is read from (default: the current one, the project directory under Pulumi)."""
    if not isinstance(path, str) or not path.strip():
        return f"chart path {show(path)} is empty"
    p = Path(path)
    full = p if p.is_absolute() else (base or Path.cwd()) / p
    if not full.exists():
        where = "" if p.is_absolute() else f" (read from {base or Path.cwd()})"
        return f"chart path {show(path)} does not exist{where}"
    if full.is_dir():
        if not (full / "Chart.yaml").is_file():
            return f"chart path {show(path)} is a directory without a Chart.yaml"
        return None
    if not full.name.endswith(ARCHIVE_SUFFIXES):
        return f"chart path {show(path)} is a file but not a chart archive (.tgz)"
    try:
        with tarfile.open(full, "r:gz") as tar:
            names = tar.getnames()
    except (tarfile.TarError, OSError, EOFError):
        return f"chart path {show(path)} is not a gzipped tar archive"
    # `helm package` puts the chart in one top directory: <name>/Chart.yaml.
    if not any(n.count("/") == 1 and n.endswith("/Chart.yaml") for n in names):
        return f"chart archive {show(path)} holds no <chart>/Chart.yaml"
    return None


def check_local_chart(path: str, base: Optional[Path] = None) -> str:
    """`path` if it is a local chart, else an `InputError` (no key path: the caller adds it)."""
    problem = local_chart_problem(path, base)
    if problem:
        raise InputError(problem, LOCAL_CHART_RULE)
    return path
