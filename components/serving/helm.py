"""One pinned upstream Helm chart as a `helm.v3.Release` (it previews without a cluster)."""

from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..model.versions import Chart


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
    create_namespace: bool = True,
) -> k8s.helm.v3.Release:
    """A Release of `chart` at its pinned version (or `version`), with a stable release name.

    OCI charts take the `oci://` reference as the chart itself; index repositories go through
    `repository_opts`. `atomic`: a failed install rolls back instead of leaving half a release.
    """
    oci = chart.repo.startswith("oci://")
    return k8s.helm.v3.Release(
        resource_name,
        name=release,
        chart=f"{chart.repo}/{chart.chart}" if oci else chart.chart,
        version=version or chart.version,
        repository_opts=None if oci else {"repo": chart.repo},
        namespace=namespace,
        create_namespace=create_namespace,
        values=dict(values or {}),
        atomic=True,
        timeout=900,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=list(depends_on)),
    )
