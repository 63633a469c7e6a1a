"""`KarpenterInstall`: the Karpenter controller on EKS, from its upstream charts (optional add-on).

Two releases, as Karpenter's upgrade guide recommends: the `karpenter-crd` chart owns the CRDs
(Helm installs a chart's `crds/` directory once and never upgrades it), then the `karpenter`
controller chart with `skipCrds` (aws/karpenter-provider-aws v1.14.1
website/content/en/docs/upgrading/upgrade-guide.md, "CRD Upgrades"). `ready` is the controller's
release: the NodePools, EC2NodeClasses and NodeOverlays of the stack wait for it.

Values (charts/karpenter/values.yaml at v1.15.0, the pinned release):
- `settings.clusterName`: required (templates/deployment.yaml: `required "Chart cannot be installed
  without a valid settings.clusterName!"`).
- `settings.interruptionQueue`: the SQS queue of EC2 interruption events; none disables
  interruption handling.
- the controller's AWS credentials: IRSA puts the role on the ServiceAccount
  (`serviceAccount.annotations["eks.amazonaws.com/role-arn"]`, getting-started
  step08-apply-helm-chart-fargate.sh); with EKS Pod Identity an association for ServiceAccount
  `karpenter` in the release namespace carries the role instead (getting-started
  step02-create-cluster.sh `podIdentityAssociations`), made outside this stack.
- `settings.featureGates.nodeOverlay`: alpha, off by default; on when a pool of the stack has
  time-sliced GPUs, whose NodeOverlays Karpenter otherwise ignores.
- where the controller runs: the chart's default affinity keeps it off nodes Karpenter launched
  (`karpenter.sh/nodepool` DoesNotExist). `system_pools` / `node_groups` pin it to node groups
  besides (the affinity of getting-started/migrating-from-cas/_index.md, "Set node affinity");
  a node-affinity term list replaces the chart's, so each term keeps the DoesNotExist.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi

from ..kube.provider import make_namespaces
from ..model.autoscalers.karpenter import NODEPOOL_LABEL
from ..model.deploy import versions
from ..model.deploy.identity import ROLE_ARN
from ..model.deploy.ownership import NamespacePlan, install_ownership, namespace_plans
from ..model.errors import InputError, show
from ..model.inputs import stack
from ..model.nodes.labels import EKS_NODEGROUP_LABEL
from ..model.scheduling import (
    LABEL_VALUE_RULE,
    POOL_LABEL,
    label_value_problem,
    validate_dns1123_label,
)
from .helm import chart_release, check_local_charts

ROLE_ANNOTATION = "eks.amazonaws.com/role-arn"
# The ServiceAccount the chart makes for release `karpenter` (templates/_helpers.tpl
# `karpenter.serviceAccountName` -> `karpenter.fullname` = the release name when it contains the
# chart name): what an EKS Pod Identity association must name.
SERVICE_ACCOUNT = "karpenter"
RELEASE = "karpenter"
# SQS queue names: up to 80 letters, digits, '-' and '_' (Amazon SQS Developer Guide,
# quotas-queues.html, "Queue name"; Karpenter's CloudFormation makes a standard queue).
_QUEUE = re.compile(r"^[A-Za-z0-9_-]{1,80}$")
_CHART_VERSION = re.compile(r"^([0-9]+)\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$")


@dataclass
class KarpenterInstallArgs:
    """Inputs of `KarpenterInstall`; every default is here."""

    cluster_name: Optional[str] = field(default=None, metadata=stack(source="cluster.name"))
    """The EKS cluster (`settings.clusterName`); required."""
    version: Optional[str] = None
    """Chart version of both charts, without a `v` (`1.15.0`), 1.0.0 or later (the first to serve
    the `karpenter.sh/v1` NodePool and `karpenter.k8s.aws/v1` EC2NodeClass the pools use);
    default: the pinned one, which supports Kubernetes 1.26 to 1.37 (docs/versions.md)."""
    namespace: Optional[str] = "kube-system"
    """Namespace of both releases (a DNS-1123 label). Karpenter's docs install into kube-system,
    whose FlowSchemas give the controller's API calls a high priority level."""
    role_arn: Optional[str] = None
    """The controller's IAM role ARN (`arn:aws:iam::123456789012:role/NAME`) for IRSA: the
    ServiceAccount annotation `eks.amazonaws.com/role-arn`. Required unless `pod_identity`."""
    pod_identity: Optional[bool] = False
    """The controller's role comes from an EKS Pod Identity association (made outside this
    component) for ServiceAccount `karpenter` in `namespace`: no annotation, no `role_arn`."""
    interruption_queue: Optional[str] = None
    """SQS queue name (1-80 letters, digits, `-` or `_`; the name, not its URL or ARN) for spot
    interruption and rebalance events, `settings.interruptionQueue`; none: no interruption
    handling."""
    system_pools: Optional[Sequence[str]] = field(
        default=None,
        metadata=stack(
            min_items=1,
            doc="Run the controller only on these pools (nodes with `gpu-inference.dev/pool` in "
            "them), each once: EKS node groups of the stack with `minNodes` >= 1 and no "
            "NoSchedule / NoExecute taint but `CriticalAddonsOnly` (the chart's one toleration); "
            "never a Karpenter pool (the controller could remove its own node).",
        ),
    )
    """Run the controller only on nodes with `gpu-inference.dev/pool` in these pool names (each
    once): untainted, never scaled to zero, not launched by Karpenter."""
    node_groups: Optional[Sequence[str]] = field(default=None, metadata=stack(min_items=1))
    """Run the controller only on these EKS managed node groups (`eks.amazonaws.com/nodegroup`),
    each once; with `system_pools` too, on either."""
    node_overlay: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """Turn on the NodeOverlay feature gate (alpha): pools with time-sliced GPUs need it."""
    crd_chart: Optional[str] = field(default=None, metadata=stack("chart.crd"))
    """A local karpenter-crd chart directory or `.tgz` instead of the registry's (air-gapped)."""
    controller_chart: Optional[str] = field(default=None, metadata=stack("chart.controller"))
    """A local karpenter chart directory or `.tgz` instead of the registry's (air-gapped)."""
    adopt: Optional[bool] = False
    """Take over what this install makes that already exists and is not this stack's (a Helm
    release of the same name that plain Helm, another tool or stack installed, a namespace, an
    object): this stack then keeps it up to date, and `destroy` leaves it in place. Off (the
    default), such a thing is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespaces `namespaces()` lists (a platform makes each namespace of a
    stack once, so that no config change moves one to another resource)."""


def _names(value: Optional[Sequence[str]], arg: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not list(value):
        raise InputError(
            f"{arg} is {show(value)}, not a non-empty list of names",
            "a list of names",
            f"args.{arg}",
        )
    out = list(value)
    for i, v in enumerate(out):
        if not isinstance(v, str) or not v:
            raise InputError(f"{show(v)} is not a name", "a non-empty string", f"args.{arg}[{i}]")
        if v in out[:i]:
            raise InputError(f"{v!r} is listed twice", "each name once", f"args.{arg}[{i}]")
        problem = label_value_problem(v)
        if problem:  # the affinity matches it as a node label value
            raise InputError(problem, LABEL_VALUE_RULE, f"args.{arg}[{i}]")
    return out


def validate_karpenter_install_args(args: KarpenterInstallArgs) -> None:
    """Refuse what the charts or the controller would fail on later, each naming `args.<arg>`."""
    if not args.cluster_name:
        raise InputError(
            "the cluster name is missing: the chart refuses to install without "
            "settings.clusterName",
            "the EKS cluster's name",
            "args.cluster_name",
        )
    version = args.version or versions.KARPENTER_VERSION
    m = _CHART_VERSION.match(version)
    if not m:
        hint = " (Karpenter's chart versions have no leading 'v')" if version[:1] == "v" else ""
        raise InputError(
            f"chart version {show(version)} is not a Karpenter chart version{hint}",
            f"e.g. {versions.KARPENTER_VERSION}",
            "args.version",
        )
    if int(m.group(1)) < 1:
        raise InputError(
            f"chart version {version!r} predates Karpenter 1.0, which first serves the "
            "karpenter.sh/v1 NodePool and karpenter.k8s.aws/v1 EC2NodeClass the pools use",
            f"1.0.0 or later (pinned: {versions.KARPENTER_VERSION})",
            "args.version",
        )
    try:
        validate_dns1123_label(args.namespace or "kube-system")
    except InputError as e:
        raise InputError(e.problem, e.allowed, "args.namespace") from None
    if args.pod_identity and args.role_arn:
        raise InputError(
            "an IAM role ARN (IRSA) is given beside EKS Pod Identity: two sources of credentials "
            "for one ServiceAccount",
            "one of them: the role ARN, or Pod Identity with the role on its association",
            "args.role_arn",
        )
    if not args.pod_identity and not args.role_arn:
        raise InputError(
            "no IAM role for the controller, which needs AWS credentials to launch instances",
            "the controller's IAM role ARN (IRSA), or EKS Pod Identity with an association for "
            f"ServiceAccount {SERVICE_ACCOUNT!r} in the release namespace",
            "args.role_arn",
        )
    if args.role_arn and not ROLE_ARN.fullmatch(args.role_arn):
        raise InputError(
            f"{show(args.role_arn)} is not an IAM role ARN",
            "arn:aws:iam::123456789012:role/NAME",
            "args.role_arn",
        )
    if args.interruption_queue is not None and not _QUEUE.match(str(args.interruption_queue)):
        raise InputError(
            f"{show(args.interruption_queue)} is not an SQS queue name",
            "1 to 80 letters, digits, '-' or '_' (the queue's name, not its URL or ARN)",
            "args.interruption_queue",
        )
    _names(args.system_pools, "system_pools")
    _names(args.node_groups, "node_groups")


def namespaces(name: str, args: KarpenterInstallArgs) -> dict[str, NamespacePlan]:
    """The namespace of both releases (none for kube-system, the default)."""
    return namespace_plans([(args.namespace or "kube-system", NamespacePlan(f"{name}-namespace"))])


def karpenter_values(args: KarpenterInstallArgs) -> dict[str, Any]:
    """The controller chart's values (validated first)."""
    validate_karpenter_install_args(args)
    settings: dict[str, Any] = {"clusterName": args.cluster_name}
    if args.interruption_queue:
        settings["interruptionQueue"] = args.interruption_queue
    if args.node_overlay:
        settings["featureGates"] = {"nodeOverlay": True}
    values: dict[str, Any] = {"settings": settings}
    if args.role_arn:
        values["serviceAccount"] = {"annotations": {ROLE_ANNOTATION: args.role_arn}}
    terms = []
    off_karpenter = {"key": NODEPOOL_LABEL, "operator": "DoesNotExist"}
    for key, names in (
        (POOL_LABEL, _names(args.system_pools, "system_pools")),
        (EKS_NODEGROUP_LABEL, _names(args.node_groups, "node_groups")),
    ):
        if names:
            match = {"key": key, "operator": "In", "values": sorted(names)}
            terms.append({"matchExpressions": [dict(off_karpenter), match]})
    if terms:
        # Only nodeAffinity: Helm merges maps, so the chart's podAntiAffinity stays.
        values["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}
            }
        }
    return values


class KarpenterInstall(pulumi.ComponentResource):
    """Karpenter's CRDs, then its controller; `ready` is the controller's release."""

    def __init__(
        self, name: str, args: KarpenterInstallArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            values = karpenter_values(args)
        except InputError as e:
            raise e.at(f"KarpenterInstall({name!r})") from None
        check_local_charts(
            f"KarpenterInstall({name!r})",
            {"crd_chart": args.crd_chart, "controller_chart": args.controller_chart},
        )
        super().__init__("gpu-inference:index:KarpenterInstall", name, None, opts)
        namespace = args.namespace or "kube-system"
        ownership = install_ownership(f"KarpenterInstall({name!r})", args.adopt)
        self.crds = chart_release(
            f"{name}-crd",
            versions.KARPENTER_CRD,
            release="karpenter-crd",
            namespace=namespace,
            version=args.version,
            local_chart=args.crd_chart,
            create_namespace=False,
            depends_on=make_namespaces(
                namespaces(name, args), self, args.namespaces_made, ownership
            ).get(namespace, []),
            parent=self,
            ownership=ownership,
        )
        self.ready = chart_release(
            f"{name}-controller",
            versions.KARPENTER,
            release=RELEASE,
            namespace=namespace,
            values=values,
            version=args.version,
            local_chart=args.controller_chart,
            create_namespace=False,
            skip_crds=True,
            depends_on=[self.crds],
            parent=self,
            ownership=ownership,
        )
        self.service_account = SERVICE_ACCOUNT
        self.register_outputs({})
