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

Records are ours only by proof: every release this package installs carries the value
`global.gpuInferenceResource`: `<stack field manager>/<resource name>`
(`gpu-inference/<project>/<stack>/<name>`), the Pulumi resource that installs it. Helm keeps the
values a release was given (`config`) in every record from the first, `pending-install` on
(`pkg/action/install.go` `createRelease`), so the records a killed create left name the resource
that left them, and a release another tool installed (plain Helm, another stack, another resource
of this stack) names none or another: it is refused, never cleared. `global` is the values key
every chart accepts: of the pinned charts only cert-manager's values.schema.json (v1.18.2) closes
its top level (`additionalProperties: false`) and it leaves `global` open; kserve-llmisvc-resources'
(v0.20.0) does not close it; the others ship none.
"""

import base64
import gzip
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from .ownership import MANAGER_PREFIX, field_manager

INSTALL_REFUSED = "cannot re-use a name that is still in use"
UPGRADE_REFUSED = "another operation (install/upgrade/rollback) is in progress"
PENDING = ("pending-install", "pending-upgrade", "pending-rollback")
RECORD_LABELS = "owner=helm,name={release}"
OWNER_VALUE = "gpuInferenceResource"
"""The key under `global` in a release's values that names the resource installing it."""


def resource_marker(project: str, stack: str, resource: str) -> str:
    """The marker of the release the resource `resource` of this stack installs."""
    return f"{field_manager(project, stack)}/{resource}"


def marker_of_urn(urn: str) -> str:
    """The marker a resource's releases carry, from its URN `urn:pulumi:STACK::PROJECT::...::NAME`."""
    parts = urn.split("::")
    stack = parts[0].rsplit(":", 1)[-1]
    return resource_marker(parts[1] if len(parts) > 1 else "", stack, parts[-1])


def owner_values(marker: str) -> dict[str, Any]:
    """The values that mark a release (merged into its own)."""
    return {"global": {OWNER_VALUE: marker}}


@dataclass(frozen=True)
class Record:
    """One revision of a release, as its Secret says."""

    secret: str
    revision: int
    status: str
    chart: Optional[str]
    """The chart's name from the release body (None when it cannot be read)."""
    owner: Optional[str] = None
    """The marker of the resource that installed it (`global.gpuInferenceResource` of its
    values), None without one."""
    chart_version: Optional[str] = None


def decode_release(data: str) -> Mapping[str, Any]:
    """The release JSON from a Secret's `data.release` as the API returns it (base64 of Helm's own
    base64 of gzip)."""
    inner = base64.b64decode(base64.b64decode(data))
    if inner[:2] == b"\x1f\x8b":
        inner = gzip.decompress(inner)
    body = json.loads(inner)
    return body if isinstance(body, dict) else {}


def encode_release(body: Mapping[str, Any]) -> str:
    """A Secret's `data.release` for the release JSON `body`: Helm's own encoding (gzip, then
    base64) base64-encoded again, as the API takes Secret data; `decode_release`'s inverse."""
    helm = base64.b64encode(gzip.compress(json.dumps(body).encode()))
    return base64.b64encode(helm).decode()


def record_of(secret: Mapping[str, Any]) -> Record:
    """A Record from a Secret (a dict as the API returns it)."""
    meta = secret.get("metadata") or {}
    labels = meta.get("labels") or {}
    chart: Optional[str] = None
    version: Optional[str] = None
    owner: Optional[str] = None
    try:
        body = decode_release((secret.get("data") or {}).get("release", ""))
        chart_meta = (body.get("chart") or {}).get("metadata") or {}
        chart, version = chart_meta.get("name"), chart_meta.get("version")
        marker = ((body.get("config") or {}).get("global") or {}).get(OWNER_VALUE)
        owner = marker if isinstance(marker, str) else None
    except (ValueError, OSError, TypeError, AttributeError):
        chart = None
    try:
        revision = int(labels.get("version", "0"))
    except ValueError:
        revision = 0
    return Record(
        str(meta.get("name", "")),
        revision,
        str(labels.get("status", "")),
        chart,
        owner,
        str(version) if version is not None else None,
    )


def release_owner(records: Iterable[Record], urn: str) -> Optional[str]:
    """Who the release whose records these are belongs to, when not to the resource `urn` (None:
    no records, or the newest is marked with `urn`: what its own interrupted create left)."""
    history = sorted(records, key=lambda r: r.revision)
    if not history:
        return None
    last = history[-1]
    ours = marker_of_urn(urn)
    if last.owner == ours:
        return None
    what = f"chart {last.chart or '?'} {last.chart_version or '?'}, revision {last.revision} "
    what += last.status
    if last.owner is None or not last.owner.startswith(MANAGER_PREFIX + "/"):
        return f"was installed by Helm or another tool ({what}; no gpu-inference marker)"
    stack_manager = ours.rsplit("/", 1)[0]
    if last.owner.startswith(stack_manager + "/"):
        return (
            f"belongs to another resource of this stack ({last.owner.rsplit('/', 1)[-1]}; "
            f"{what}): a change moved the release to another resource without an alias"
        )
    other = last.owner.removeprefix(MANAGER_PREFIX + "/").rsplit("/", 1)[0]
    return f"belongs to another stack ({other}; {what})"


def records_to_clear(
    records: Iterable[Record], operation: str, error: str, urn: Optional[str]
) -> list[str]:
    """The Secrets to delete so that `operation` (`create` or `update`) of the resource `urn` can
    be retried after `error`, or [] when this is not a release that resource's own interrupted
    operation left half made (the error stands). Only records marked with `urn` are ever
    cleared: never a release another tool, another stack or another resource installed."""
    history = sorted(records, key=lambda r: r.revision)
    if not history or urn is None:
        return []
    last = history[-1]
    ours = marker_of_urn(urn)
    if last.owner != ours:
        return []  # not proven ours: the error stands
    if operation == "create" and INSTALL_REFUSED in error:
        if last.status in (*PENDING, "failed", "uninstalling") or (
            last.status == "deployed" and len(history) == 1
        ):
            return [r.secret for r in history if r.owner == ours]
        return []
    if operation == "update" and UPGRADE_REFUSED in error and last.status in PENDING:
        return [r.secret for r in history if r.status in PENDING and r.owner == ours]
    return []
