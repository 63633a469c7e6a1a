"""`KnativeServing`: Knative Serving with the podspec feature flags KServe node scheduling needs.

Two modes, from seeds 001 / 002:
- `operator`: the upstream `knative-operator` Helm chart in its own namespace, then a
  `KnativeServing` CR (operator.knative.dev/v1beta1) whose `spec.config.features` turns the flags
  on at install time, with an ingress (Kourier by default, Istio selectable) so KServe Serverless
  actually serves;
- `patch`: Knative is already installed: a server-side-apply `ConfigMapPatch` of
  `knative-serving/config-features` setting the same keys.
Never both on one cluster: the operator reverts hand edits of `config-features` (knative/operator
#264, #1838). The podspec flags "cannot safely be disabled once enabled" (Knative's own comments):
turning one off is refused unless the caller says so explicitly.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..kube.objects import CONFIG_MAP_PATCH, CoreObject
from ..kube.provider import create_opts, make_namespaces, owned
from ..model.deploy import versions
from ..model.deploy.charts import check_local_chart
from ..model.deploy.ownership import NamespacePlan, install_ownership, namespace_plans
from ..model.errors import InputError, did_you_mean, show
from ..model.inputs import stack
from ..model.serving.knative_features import (
    KNATIVE_FEATURES,
    PODSPEC_FLAGS,
    enabled_pod_fields,
    feature_values,
)
from .helm import Release, marked_values, release_opts

MODES = ("operator", "patch")
INGRESSES = {
    "kourier": "kourier.ingress.networking.knative.dev",
    "istio": "istio.ingress.networking.knative.dev",
}
OPERATOR_NAMESPACE = "knative-operator"
SERVING_NAMESPACE = "knative-serving"


@dataclass
class KnativeServingArgs:
    """Inputs of `KnativeServing`; every default is here."""

    mode: Optional[str] = field(default="operator", metadata=stack(choices=MODES))
    """`operator` (install Knative through its operator) or `patch` (Knative is installed)."""
    version: Optional[str] = field(default=None, metadata=stack(syntax="version"))
    """operator mode: Knative Serving version (`spec.version`); default: the operator's own."""
    operator_chart_version: Optional[str] = field(default=None, metadata=stack(syntax="version"))
    """operator mode: knative-operator chart version; default: the pinned one."""
    operator_chart: Optional[str] = field(default=None, metadata=stack("chart"))
    """operator mode: a local knative-operator chart directory (with `Chart.yaml`) or `.tgz`
    installed instead of the repository's (air-gapped clusters); `operator_chart_version` is then
    unused (a local chart carries its own version)."""
    ingress: Optional[str] = field(default="kourier", metadata=stack(choices=tuple(INGRESSES)))
    """operator mode: `kourier` or `istio` (Istio must already be installed). KServe is told too:
    without Istio it makes no Istio VirtualServices."""
    podspec_flags: Optional[Mapping[str, str]] = field(default=None, metadata=stack(hidden=True))
    """Values of the three podspec flags; default: all `enabled`."""
    features: Optional[Mapping[str, str]] = field(
        default=None,
        metadata=stack(
            doc="Extra `config-features` entries, name -> `enabled` | `disabled` | `allowed`: "
            "names must be Knative Serving features (a misspelling is refused with the closest "
            "name); not with mode `none`."
        ),
    )
    """Extra `config-features` entries, name -> enabled | disabled | allowed (Knative Serving
    features only)."""
    allow_disabling_podspec_flags: Optional[bool] = field(
        default=False,
        metadata=stack(
            doc="Needed to set a podspec flag (`kubernetes.podspec-nodeselector`, "
            "`-affinity`, `-tolerations`) to anything but `enabled` in `features`: Knative says "
            "they cannot safely be disabled once enabled. Still refused while a Serverless "
            "InferenceService uses the flag."
        ),
    )
    """Set to True to let a podspec flag be anything but `enabled` (unsafe once pods use it)."""
    adopt: Optional[bool] = False
    """Take over what this install makes that already exists and is not this stack's (a Helm
    release of the same name that plain Helm, another tool or stack installed, a namespace, an
    object): this stack then keeps it up to date, and `destroy` leaves it in place. Off (the
    default), such a thing is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespaces `namespaces()` lists (a platform makes each namespace of a
    stack once, so that no config change moves one to another resource)."""


def namespaces(name: str, args: KnativeServingArgs) -> dict[str, NamespacePlan]:
    """operator mode: the operator's namespace and Knative Serving's; patch mode: none (Knative's
    own namespace is the cluster's)."""
    if (args.mode or "operator") == "patch":
        return {}
    return namespace_plans(
        [
            (OPERATOR_NAMESPACE, NamespacePlan(f"{name}-operator-ns")),
            (SERVING_NAMESPACE, NamespacePlan(f"{name}-serving-ns")),
        ]
    )


def knative_features(args: KnativeServingArgs) -> dict[str, str]:
    """The validated `config-features` entries this install sets, sorted by name."""
    mode = args.mode or "operator"
    if mode not in MODES:
        raise InputError(f"Knative mode {show(mode)} is not known", ", ".join(MODES), "mode")
    if (args.ingress or "kourier") not in INGRESSES:
        raise InputError(
            f"ingress {show(args.ingress)} is not known", ", ".join(INGRESSES), "ingress"
        )
    features = {flag: "enabled" for flag in PODSPEC_FLAGS}
    for where, given in (("podspecFlags", args.podspec_flags), ("features", args.features)):
        for name, value in (given or {}).items():
            path = f"{where}.{name}"
            if where == "podspecFlags" and name not in PODSPEC_FLAGS:
                raise InputError(
                    f"{show(name)} is not a podspec flag", ", ".join(PODSPEC_FLAGS), path
                )
            if name not in KNATIVE_FEATURES:
                hint = did_you_mean(name, KNATIVE_FEATURES)
                raise InputError(
                    f"{show(name)} is not a Knative feature{hint}",
                    ", ".join(KNATIVE_FEATURES),
                    path,
                )
            if value not in feature_values(name):
                raise InputError(
                    f"feature value {show(value)} is not valid",
                    ", ".join(feature_values(name)),
                    path,
                )
            if (
                name in PODSPEC_FLAGS
                and value != "enabled"
                and not args.allow_disabling_podspec_flags
            ):
                raise InputError(
                    f"{name} is set to {value!r}; the podspec flags cannot safely be disabled once "
                    "enabled (running Knative services that carry the field would fail to update)",
                    "'enabled', or allow_disabling_podspec_flags=True to do it anyway",
                    path,
                )
            features[name] = value
    if args.operator_chart is not None:
        if mode != "operator":
            raise InputError(
                f"operator_chart is given in mode {mode!r}, which installs no chart",
                "operator_chart only with mode 'operator'",
                "args.operator_chart",
            )
        try:
            check_local_chart(args.operator_chart)
        except InputError as e:
            raise e.at("args.operator_chart") from None
    return dict(sorted(features.items()))


def knative_serving_spec(args: KnativeServingArgs, features: Mapping[str, str]) -> dict[str, Any]:
    """The `KnativeServing` CR spec: features, and the chosen ingress enabled and selected."""
    ingress = args.ingress or "kourier"
    spec: dict[str, Any] = {
        "config": {
            "features": dict(features),
            "network": {"ingress-class": INGRESSES[ingress]},
        },
        "ingress": {ingress: {"enabled": True}},
    }
    if args.version:
        spec["version"] = args.version.lstrip("v")
    return spec


WAIT_FOR = "pulumi.com/waitFor"


class KnativeServing(pulumi.ComponentResource):
    """Knative Serving with the podspec flags on. Attributes: `mode`, `features` (what is set),
    `enabled_pod_fields` (what a KServe Serverless pod may carry), `ready` (depend on it)."""

    def __init__(
        self, name: str, args: KnativeServingArgs, opts: Optional[pulumi.ResourceOptions] = None
    ) -> None:
        try:
            features = knative_features(args)
        except InputError as e:
            raise e.at(f"KnativeServing({name!r})") from None
        super().__init__("gpu-inference:index:KnativeServing", name, None, opts)
        self.mode = args.mode or "operator"
        self.features = features
        self.enabled_pod_fields = enabled_pod_fields(features)
        child = pulumi.ResourceOptions(parent=self)
        self.ready: pulumi.Resource
        if self.mode == "patch":
            self.ready = CoreObject(
                CONFIG_MAP_PATCH,
                f"{name}-config-features",
                metadata=owned(
                    {
                        "name": "config-features",
                        "namespace": SERVING_NAMESPACE,
                        # Take over these keys from whoever set them before (kubectl edit, a
                        # manifest).
                        "annotations": {"pulumi.com/patchForce": "true"},
                    }
                ),
                data=features,
                opts=child,
            )
        else:
            chart = versions.KNATIVE_OPERATOR
            # Knative already there: `patch` mode sets the flags in its config-features instead.
            ownership = install_ownership(
                f"KnativeServing({name!r})", args.adopt, "mode", "mode", "patch"
            )
            made = make_namespaces(namespaces(name, args), self, args.namespaces_made, ownership)
            local = args.operator_chart
            operator = Release(
                f"{name}-operator",
                {
                    "name": "knative-operator",
                    "chart": local or chart.chart,
                    "version": None if local else args.operator_chart_version or chart.version,
                    "repositoryOpts": None if local else {"repo": chart.repo},
                    "namespace": OPERATOR_NAMESPACE,
                    "values": marked_values(None, f"{name}-operator"),
                },
                opts=release_opts(self, made[OPERATOR_NAMESPACE], ownership),
            )
            self.ready = k8s.apiextensions.CustomResource(
                f"{name}-serving",
                api_version="operator.knative.dev/v1beta1",
                kind="KnativeServing",
                metadata=owned(
                    {
                        "name": "knative-serving",
                        "namespace": SERVING_NAMESPACE,
                        # pulumi-kubernetes counts a custom resource as ready once created; KServe
                        # decides at start whether Knative is there, so wait for the operator to
                        # report Serving Ready (`pulumi.com/waitFor`, pulumi-kubernetes >= 4.18).
                        "annotations": {WAIT_FOR: "condition=Ready"},
                    }
                ),
                spec=knative_serving_spec(args, features),
                opts=create_opts(self, [operator, *made[SERVING_NAMESPACE]], ownership),
            )
        self.register_outputs({"mode": self.mode, "features": features})
