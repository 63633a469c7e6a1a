"""What to clear of a Helm release's history so that a Pulumi `helm.v3.Release` an interrupted
`up` left half made can be installed or upgraded again.

Helm keeps each revision of a release as a Secret `sh.helm.release.v1.<release>.v<revision>`
(type `helm.sh/release.v1`, labels `owner=helm`, `name`, `status`, `version`), its `release`
field the release as gzipped JSON in base64 (helm v3 `pkg/storage/driver/secrets.go`, `util.go`
`encodeRelease`). `helm install` refuses a name any revision still holds ("cannot re-use a name
that is still in use", `pkg/action/install.go` `availableName`) and `helm upgrade` one whose last
revision is pending ("another operation (install/upgrade/rollback) is in progress",
`pkg/action/upgrade.go`). A killed `up` leaves exactly those: a `pending-install` (or, when the
provider process outlived the CLI and finished, a `deployed` first revision Pulumi never
recorded), or a `pending-upgrade` on top of the deployed revision. Deleting those records (only
the records: the objects stay) lets the retried install adopt the objects, which carry the
release's `meta.helm.sh/release-name` annotation (helm `pkg/action/validate.go`).
"""

import base64
import gzip
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

INSTALL_REFUSED = "cannot re-use a name that is still in use"
UPGRADE_REFUSED = "another operation (install/upgrade/rollback) is in progress"
PENDING = ("pending-install", "pending-upgrade", "pending-rollback")
RECORD_LABELS = "owner=helm,name={release}"


@dataclass(frozen=True)
class Record:
    """One revision of a release, as its Secret says."""

    secret: str
    revision: int
    status: str
    chart: Optional[str]
    """The chart's name from the release body (None when it cannot be read)."""


def decode_release(data: str) -> Mapping[str, Any]:
    """The release JSON from a Secret's `data.release` as the API returns it (base64 of Helm's own
    base64 of gzip)."""
    inner = base64.b64decode(base64.b64decode(data))
    if inner[:2] == b"\x1f\x8b":
        inner = gzip.decompress(inner)
    body = json.loads(inner)
    return body if isinstance(body, dict) else {}


def record_of(secret: Mapping[str, Any]) -> Record:
    """A Record from a Secret (a dict as the API returns it)."""
    meta = secret.get("metadata") or {}
    labels = meta.get("labels") or {}
    chart: Optional[str] = None
    try:
        body = decode_release((secret.get("data") or {}).get("release", ""))
        chart = ((body.get("chart") or {}).get("metadata") or {}).get("name")
    except (ValueError, OSError, TypeError):
        chart = None
    try:
        revision = int(labels.get("version", "0"))
    except ValueError:
        revision = 0
    return Record(str(meta.get("name", "")), revision, str(labels.get("status", "")), chart)


def chart_name(chart: str) -> str:
    """The chart's name from a Release's `chart` input: a repository chart name, an `oci://`
    reference or a local path (directory or `.tgz`, whose name may carry the version)."""
    last = chart.rstrip("/").rsplit("/", 1)[-1]
    for suffix in (".tgz", ".tar.gz"):
        if last.endswith(suffix):
            last = last[: -len(suffix)]
            head, sep, tail = last.rpartition("-")
            if sep and tail[:1].isdigit():
                last = head
    return last


def records_to_clear(
    records: Iterable[Record], operation: str, error: str, chart: Optional[str]
) -> list[str]:
    """The Secrets to delete so that `operation` (`create` or `update`) can be retried after
    `error`, or [] when this is not a half-made release of this chart (the error stands)."""
    history = sorted(records, key=lambda r: r.revision)
    if not history:
        return []
    last = history[-1]
    if chart is not None and last.chart is not None and last.chart != chart:
        return []  # another chart under this release name: not ours to clear
    if operation == "create" and INSTALL_REFUSED in error:
        if last.status in (*PENDING, "failed", "uninstalling") or (
            last.status == "deployed" and len(history) == 1
        ):
            return [r.secret for r in history]
        return []
    if operation == "update" and UPGRADE_REFUSED in error and last.status in PENDING:
        return [r.secret for r in history if r.status in PENDING]
    return []
