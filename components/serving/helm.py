"""One pinned upstream Helm chart as a `helm.v3.Release` (it previews without a cluster)."""

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi

from ..kube.objects import sdk_options
from ..kube.provider import hooks_of
from ..model.deploy.charts import check_local_chart
from ..model.deploy.helm_records import owner_values, resource_marker
from ..model.deploy.ownership import Ownership
from ..model.deploy.versions import Chart
from ..model.errors import InputError


class Release(pulumi.CustomResource):
    """A `kubernetes.helm.v3.Release`, registered without importing `pulumi_kubernetes.helm.v3`:
    that package imports its Python-side `Chart` and through it `requests` (0.05 s of every
    preview and `up`). Registered as the SDK class registers it: the same type token and URN,
    the camelCase `inputs`, `compat: "true"`, `status` read back and the kubernetes plugin's
    version. tests/serving/test_helm_release_sdk.py holds the request equal to the SDK class's."""

    status: pulumi.Output[Any]

    def __init__(
        self, resource_name: str, inputs: Mapping[str, Any], opts: pulumi.ResourceOptions
    ) -> None:
        props = {**inputs, "compat": "true", "status": None}
        opts = pulumi.ResourceOptions.merge(sdk_options("pulumi_kubernetes"), opts)
        super().__init__("kubernetes:helm.sh/v3:Release", resource_name, props, opts)


def marked_values(values: Optional[Mapping[str, Any]], resource_name: str) -> dict[str, Any]:
    """A release's values with the marker naming this stack and the resource that installs it
    (`global.gpuInferenceResource`; `components.model.deploy.helm_records`), the proof its hooks
    ask before clearing or taking anything."""
    out = dict(values or {})
    marker = owner_values(resource_marker(pulumi.get_project(), pulumi.get_stack(), resource_name))
    out["global"] = {**dict(out.get("global") or {}), **marker["global"]}
    return out


def release_opts(
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
    ownership: Optional[Ownership] = None,
) -> pulumi.ResourceOptions:
    """Options of a release we install: under a `KubeProvider`, a release of that name another
    installed is refused (adopted on purpose: its records moved aside, and `destroy` leaves it
    installed), and one this resource's interrupted operation left half made is cleared and
    retried."""
    hooks = hooks_of(parent)
    adopt = ownership is not None and ownership.adopt
    return pulumi.ResourceOptions(
        parent=parent,
        depends_on=list(depends_on),
        hooks=hooks.release(ownership) if hooks else None,
        retain_on_delete=True if adopt else None,
    )


def check_local_charts(owner: str, charts: Mapping[str, Optional[str]]) -> None:
    """Refuse a bad local chart path (arg name -> path or None) before anything is registered,
    naming `owner.args.<arg>`."""
    for arg, path in charts.items():
        if path is None:
            continue
        try:
            check_local_chart(path)
        except InputError as e:
            raise e.at(f"{owner}.args.{arg}") from None


def chart_release(
    resource_name: str,
    chart: Chart,
    *,
    release: str,
    namespace: str,
    parent: pulumi.Resource,
    values: Optional[Mapping[str, Any]] = None,
    version: Optional[str] = None,
    depends_on: Sequence[pulumi.Resource] = (),
    create_namespace: bool = False,
    local_chart: Optional[str] = None,
    skip_crds: bool = False,
    ownership: Optional[Ownership] = None,
) -> Release:
    """A Release of `chart` at its pinned version (or `version`), with a stable release name.

    OCI charts take the `oci://` reference as the chart itself; index repositories go through
    `repository_opts`. `local_chart` (a chart directory or `.tgz`, checked by the caller) replaces
    the repository: no `repository_opts`, no version (a local chart carries its own).
    `atomic`: a failed install rolls back instead of leaving half a release (not when adopting:
    Helm's rollback would uninstall the objects it took over). `skip_crds`: leave out the chart's
    `crds/` directory (another release installs the CRDs). The values carry the marker of the
    resource (`marked_values`); the hooks are `release_opts`'.
    `create_namespace` lets Helm make the namespace, which `destroy` then leaves: off by default,
    callers make it with `make_namespaces` instead.
    """
    oci = chart.repo.startswith("oci://")
    repo: Optional[dict[str, str]]
    if local_chart:
        ref, pinned, repo = local_chart, None, None
    else:
        ref = f"{chart.repo}/{chart.chart}" if oci else chart.chart
        pinned = version or chart.version
        repo = None if oci else {"repo": chart.repo}
    return Release(
        resource_name,
        {
            "name": release,
            "chart": ref,
            "version": pinned,
            "repositoryOpts": repo,
            "namespace": namespace,
            "createNamespace": create_namespace,
            "values": marked_values(values, resource_name),
            "atomic": not (ownership is not None and ownership.adopt),
            "skipCrds": True if skip_crds else None,
            "timeout": 900,
        },
        opts=release_opts(parent, depends_on, ownership),
    )
