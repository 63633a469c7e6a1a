"""One pinned upstream Helm chart as a `helm.v3.Release` (it previews without a cluster)."""

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..kube.provider import hooks_of
from ..model.deploy.charts import check_local_chart
from ..model.deploy.versions import Chart
from ..model.errors import InputError


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
) -> k8s.helm.v3.Release:
    """A Release of `chart` at its pinned version (or `version`), with a stable release name.

    OCI charts take the `oci://` reference as the chart itself; index repositories go through
    `repository_opts`. `local_chart` (a chart directory or `.tgz`, checked by the caller) replaces
    the repository: no `repository_opts`, no version (a local chart carries its own).
    `atomic`: a failed install rolls back instead of leaving half a release. `skip_crds`: leave
    out the chart's `crds/` directory (another release installs the CRDs). Under a `KubeProvider`
    a release an interrupted `up` left half made is cleared and retried (its error hook).
    `create_namespace` lets Helm make the namespace, which `destroy` then leaves: off by default,
    callers make it with `make_namespaces` instead.
    """
    oci = chart.repo.startswith("oci://")
    repo: Optional[k8s.helm.v3.RepositoryOptsArgsDict]
    if local_chart:
        ref, pinned, repo = local_chart, None, None
    else:
        ref = f"{chart.repo}/{chart.chart}" if oci else chart.chart
        pinned = version or chart.version
        repo = None if oci else {"repo": chart.repo}
    return k8s.helm.v3.Release(
        resource_name,
        name=release,
        chart=ref,
        version=pinned,
        repository_opts=repo,
        namespace=namespace,
        create_namespace=create_namespace,
        values=dict(values or {}),
        atomic=True,
        skip_crds=True if skip_crds else None,
        timeout=900,
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=list(depends_on),
            hooks=hooks.release() if (hooks := hooks_of(parent)) else None,
        ),
    )
