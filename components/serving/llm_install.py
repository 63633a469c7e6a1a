"""`LLMServingInstall`: what KServe v0.20.0's LLMInferenceService needs, installed in dependency
order from upstream charts and release manifests at pinned versions.

Sources: kserve/website `versioned_docs/version-0.20/admin-guide/kubernetes-deployment-llmisvc.md`
(minimums: Kubernetes 1.32+, cert-manager 1.18.0+, Gateway API 1.3.0+, GIE 1.2.0, Envoy Gateway
1.5.0+, LeaderWorkerSet 0.6.2+; order: cert-manager, Gateway API and GIE CRDs, Envoy Gateway,
Envoy AI Gateway, LWS, GatewayClass, Gateway, KServe) and `.../llmisvc/llmisvc-dependencies.md`
("Install GIE CRDs BEFORE Gateway Provider": the provider looks for the InferencePool CRD when it
starts); kserve/kserve v0.20.0 `kserve-deps.env` (the versions pinned below) and the scripts it
runs, `hack/setup/infra/`:

1. cert-manager: chart `cert-manager` from https://charts.jetstack.io, `crds.enabled=true`
   (manage.cert-manager-helm.sh). KServe's CI pins v1.17.0, below the guide's 1.18.0 minimum:
   `versions.CERT_MANAGER` (v1.18.2: the tag exists; the chart at that version was not fetched
   from this machine), the same one the platform's CertManager installs; in a stack that one
   serves both (`cert_manager=False` here).
2. Gateway API CRDs: `standard-install.yaml` of kubernetes-sigs/gateway-api release v1.5.1
   (gateway-api/manage.gateway-api-crd.sh).
3. Gateway API Inference Extension CRDs: `v1-manifests.yaml` of
   kubernetes-sigs/gateway-api-inference-extension v1.5.0, and the llm-d.ai CRDs from
   `manifests.yaml` of llm-d/llm-d-router v0.9.0 (gateway-api/manage.gateway-api-extension-crd.sh;
   that file's content was not read). The kserve-llmisvc-resources chart bundles the same CRDs
   (InferencePool at bundle v1.5.0-rc.2) unless `kserve.llmisvc.createGIECRDs: false`: set here,
   since Helm cannot adopt objects another tool created.
4. Envoy Gateway: its own CRDs only, then chart `oci://docker.io/envoyproxy/gateway-helm` v1.8.1
   with its CRDs skipped, namespace `envoy-gateway-system`, as manage.envoy-gateway-helm.sh
   does (`helm show crds gateway-helm | yq 'select(.spec.group == "gateway.envoyproxy.io")' |
   kubectl apply --server-side`, then `helm upgrade -i eg ... --skip-crds`): the chart's `crds/`
   bundle Gateway API CRDs too, which step 2 (or the cluster) owns. The eight
   `gateway.envoyproxy.io` CRDs are rendered client side from Envoy's own CRDs chart
   `oci://docker.io/envoyproxy/gateway-crds-helm` v1.8.1 with `crds.envoyGateway.enabled` and
   `crds.gatewayAPI.enabled: false` (`helm/v4.Chart`, each CRD a resource of this stack: its
   templates are the same files as gateway-helm's `charts/crds/crds/generated/`, and the chart is
   too large for a Helm release record: Envoy's install docs render it with `helm template`
   for that reason), and the Gateway API safe-upgrade policy the eg chart would render is left
   to the Gateway API install (`crds.gatewayAPI.safeUpgradePolicy.enabled: false`, gateway-helm
   README "Skip install CRDs").
5. Envoy AI Gateway (the InferencePool backend of Envoy Gateway): Envoy Gateway's values from
   envoyproxy/ai-gateway v1.0.0 `manifests/envoy-gateway-values.yaml` and
   `examples/inference-pool/envoy-gateway-values-addon.yaml` (transcribed below), then charts
   `oci://docker.io/envoyproxy/ai-gateway-crds-helm` and `ai-gateway-helm` v1.0.0 in
   `envoy-ai-gateway-system` (manage.envoy-ai-gateway-helm.sh).
6. LeaderWorkerSet: `manifests.yaml` of kubernetes-sigs/lws release v0.8.0, applied server-side
   (manage.lws-operator.sh; the CRD is too large for a client-side apply's annotation; the
   pulumi-kubernetes provider applies server-side by default).
7. GatewayClass `envoy` (controller `gateway.envoyproxy.io/gatewayclass-controller`) and the
   Gateway `kserve/kserve-ingress-gateway` (an `http` listener on port 80, routes from all
   namespaces, infrastructure label `serving.kserve.io/gateway`), KServe's default gateway
   (gateway-api/manage.gateway-api-gwclass.sh and manage.gateway-api-gw.sh).
8. KServe: charts `kserve-llmisvc-crd` then `kserve-llmisvc-resources` (oci://ghcr.io/kserve/charts,
   v0.20.0, namespace kserve); with KServe's InferenceService charts installed too
   (`KServeInstall`), `kserve.createSharedResources: false` (they already made the shared
   inferenceservice-config ConfigMap, Issuer and ClusterStorageContainer:
   hack/setup/common.sh determine_shared_resources_helm); then `kserve-runtime-configs` with
   `kserve.llmisvcConfigs.enabled: true` (default false) and `kserve.servingruntime.enabled:
   false`, as the release `kserve-llmisvc-configs` (KServeInstall's release of the same chart is
   named `kserve-runtime-configs`): the LLMInferenceServiceConfig presets the controller merges.

Every step has a local replacement for air-gapped clusters: a chart directory or `.tgz`, or a
manifest file.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pulumi
import pulumi_kubernetes as k8s

from ..kube.provider import create_opts, make_namespaces, owned, owned_children
from ..model.deploy import versions
from ..model.deploy.ownership import (
    NamespacePlan,
    Ownership,
    install_ownership,
    namespace_plans,
)
from ..model.deploy.versions import Chart
from ..model.errors import InputError, show
from ..model.inputs import stack
from .helm import chart_release, check_local_charts

# Pinned versions. cert-manager is the stack's one (`versions.CERT_MANAGER`, 1.18.0 or later as
# the guide asks).
GATEWAY_API_VERSION = "v1.5.1"
GIE_VERSION = "v1.5.0"
LLMD_ROUTER_VERSION = "v0.9.0"
LWS_VERSION = "v0.8.0"
ENVOY_GATEWAY = Chart("gateway-helm", "oci://docker.io/envoyproxy", "v1.8.1")
ENVOY_GATEWAY_CRDS = Chart("gateway-crds-helm", "oci://docker.io/envoyproxy", "v1.8.1")
ENVOY_GATEWAY_CRDS_VALUES = {
    "crds": {"gatewayAPI": {"enabled": False}, "envoyGateway": {"enabled": True}}
}
"""gateway-crds-helm v1.8.1 values.yaml: both off by default."""
ENVOY_AI_GATEWAY_CRDS = Chart("ai-gateway-crds-helm", "oci://docker.io/envoyproxy", "v1.0.0")
ENVOY_AI_GATEWAY = Chart("ai-gateway-helm", "oci://docker.io/envoyproxy", "v1.0.0")
# KServe's LLM charts, at the pinned KServe (charts/*/Chart.yaml `version: v0.20.0`).
_KSERVE_CHARTS = versions.KSERVE_CRD.repo
KSERVE_LLMISVC_CRD = Chart("kserve-llmisvc-crd", _KSERVE_CHARTS, versions.KSERVE_VERSION)
KSERVE_LLMISVC_RESOURCES = Chart(
    "kserve-llmisvc-resources", _KSERVE_CHARTS, versions.KSERVE_VERSION
)
KSERVE_LLMISVC_CONFIGS = Chart("kserve-runtime-configs", _KSERVE_CHARTS, versions.KSERVE_VERSION)

GATEWAY_API_MANIFEST = (
    "https://github.com/kubernetes-sigs/gateway-api/releases/download/"
    f"{GATEWAY_API_VERSION}/standard-install.yaml"
)
GIE_MANIFEST = (
    "https://github.com/kubernetes-sigs/gateway-api-inference-extension/releases/download/"
    f"{GIE_VERSION}/v1-manifests.yaml"
)
LLMD_CRDS_MANIFEST = (
    f"https://github.com/llm-d/llm-d-router/releases/download/{LLMD_ROUTER_VERSION}/manifests.yaml"
)
LWS_MANIFEST = (
    f"https://github.com/kubernetes-sigs/lws/releases/download/{LWS_VERSION}/manifests.yaml"
)

GATEWAY_CLASS = "envoy"
GATEWAY_CONTROLLER = "gateway.envoyproxy.io/gatewayclass-controller"
GATEWAY_NAME = "kserve-ingress-gateway"
KSERVE_NAMESPACE = "kserve"

# envoyproxy/ai-gateway v1.0.0: manifests/envoy-gateway-values.yaml merged with
# examples/inference-pool/envoy-gateway-values-addon.yaml (the two files KServe's script passes).
ENVOY_GATEWAY_AI_VALUES: dict[str, Any] = {
    "config": {
        "envoyGateway": {
            "gateway": {"controllerName": GATEWAY_CONTROLLER},
            "logging": {"level": {"default": "info"}},
            "provider": {"type": "Kubernetes"},
            "extensionApis": {"enableEnvoyPatchPolicy": True, "enableBackend": True},
            "extensionManager": {
                "hooks": {
                    "xdsTranslator": {
                        "translation": {
                            "listener": {"includeAll": True},
                            "route": {"includeAll": True},
                            "cluster": {"includeAll": True},
                            "secret": {"includeAll": True},
                        },
                        "post": ["Translation", "Cluster", "Route"],
                    }
                },
                "service": {
                    "fqdn": {
                        "hostname": "ai-gateway-controller.envoy-ai-gateway-system.svc.cluster.local",
                        "port": 1063,
                    }
                },
                "backendResources": [
                    {
                        "group": "inference.networking.k8s.io",
                        "kind": "InferencePool",
                        "version": "v1",
                    }
                ],
            },
        }
    }
}


@dataclass
class LLMServingInstallArgs:
    """Inputs of `LLMServingInstall`: which steps run, and local copies for air-gapped
    clusters."""

    cert_manager: Optional[bool] = field(default=True, metadata=stack(hidden=True))
    """Install cert-manager (the llmisvc webhook's certificate and LWS need it); False when the
    cluster (or the platform's CertManager, at 1.18.0 or later) has it."""
    gateway_api_crds: Optional[bool] = True
    """Install the Gateway API CRDs (False when the cluster has them: KServe's install script
    skips them when `gateways.gateway.networking.k8s.io` exists)."""
    inference_extension_crds: Optional[bool] = True
    """Install the Gateway API Inference Extension CRDs (InferencePool) and llm-d's CRDs (False
    when the cluster has them: KServe's install script skips both when
    `inferencepools.inference.networking.k8s.io` exists)."""
    envoy_gateway: Optional[bool] = True
    """Install Envoy Gateway with the Envoy AI Gateway, and the GatewayClass `envoy`."""
    gateway: Optional[bool] = True
    """Create KServe's default Gateway `kserve/kserve-ingress-gateway`."""
    leader_worker_set: Optional[bool] = True
    """Install LeaderWorkerSet (multi-node workers; False when the cluster runs it: KServe's
    install script skips it when `lws-system/lws-controller-manager` exists)."""
    kserve_installed: Optional[bool] = field(
        default=False, metadata=stack(source="addons.kserve.enabled")
    )
    """KServe's InferenceService charts are installed too (KServeInstall): they own the shared
    resources and the `kserve` namespace, so the llmisvc chart must not make them."""
    cert_manager_chart: Optional[str] = field(default=None, metadata=stack(hidden=True))
    """A local cert-manager chart (directory or `.tgz`)."""
    envoy_gateway_chart: Optional[str] = field(default=None, metadata=stack("chart.envoyGateway"))
    """A local Envoy Gateway chart (gateway-helm) directory or `.tgz`."""
    envoy_gateway_crds_chart: Optional[str] = field(
        default=None, metadata=stack("chart.envoyGatewayCrds")
    )
    """A local Envoy Gateway CRDs chart (gateway-crds-helm) directory or `.tgz`."""
    ai_gateway_crds_chart: Optional[str] = field(
        default=None, metadata=stack("chart.aiGatewayCrds")
    )
    """A local Envoy AI Gateway CRDs chart (ai-gateway-crds-helm)."""
    ai_gateway_chart: Optional[str] = field(default=None, metadata=stack("chart.aiGateway"))
    """A local Envoy AI Gateway chart (ai-gateway-helm)."""
    llmisvc_crd_chart: Optional[str] = field(default=None, metadata=stack("chart.llmisvcCrd"))
    """A local kserve-llmisvc-crd chart."""
    llmisvc_resources_chart: Optional[str] = field(
        default=None, metadata=stack("chart.llmisvcResources")
    )
    """A local kserve-llmisvc-resources chart."""
    runtime_configs_chart: Optional[str] = field(
        default=None, metadata=stack("chart.runtimeConfigs")
    )
    """A local kserve-runtime-configs chart (its LLMInferenceServiceConfig presets)."""
    gateway_api_manifest: Optional[str] = field(default=None, metadata=stack("manifest.gatewayApi"))
    """A local copy of Gateway API's standard-install.yaml."""
    gie_manifest: Optional[str] = field(default=None, metadata=stack("manifest.inferenceExtension"))
    """A local copy of the Inference Extension's v1-manifests.yaml."""
    llmd_crds_manifest: Optional[str] = field(default=None, metadata=stack("manifest.llmdCrds"))
    """A local copy of llm-d-router's manifests.yaml (the llm-d.ai CRDs)."""
    lws_manifest: Optional[str] = field(default=None, metadata=stack("manifest.lws"))
    """A local copy of LeaderWorkerSet's manifests.yaml."""
    adopt: Optional[bool] = False
    """Take over what this install makes that already exists and is not this stack's (a Helm
    release of the same name that plain Helm, another tool or stack installed, a namespace, an
    object): this stack then keeps it up to date, and `destroy` leaves it in place. Off (the
    default), such a thing is refused at `up`, naming its owner."""
    namespaces_made: Optional[bool] = field(default=False, metadata=stack(hidden=True))
    """The caller makes the namespaces `namespaces()` lists (a platform makes each namespace of a
    stack once, so that no config change moves one to another resource)."""


LOCAL_CHARTS = (
    "cert_manager_chart",
    "envoy_gateway_chart",
    "envoy_gateway_crds_chart",
    "ai_gateway_crds_chart",
    "ai_gateway_chart",
    "llmisvc_crd_chart",
    "llmisvc_resources_chart",
    "runtime_configs_chart",
)
"""The Args fields that name a local chart."""
LOCAL_MANIFESTS = ("gateway_api_manifest", "gie_manifest", "llmd_crds_manifest", "lws_manifest")
"""The Args fields that name a local manifest file."""
NAMESPACES = ("envoy-gateway-system", "envoy-ai-gateway-system")
ENVOY_SWITCH = "envoyGateway"
"""The stack key of the Envoy Gateway step (`envoy_gateway`)."""
"""The namespaces the install makes besides cert-manager's and `kserve`."""


def namespaces(name: str, args: LLMServingInstallArgs) -> dict[str, NamespacePlan]:
    """The namespaces the install's releases and objects live in: cert-manager's (when it
    installs it), Envoy Gateway's and the Envoy AI Gateway's, and `kserve` (beside KServeInstall
    that one makes it when this install is used alone)."""
    wanted: list[tuple[str, NamespacePlan]] = []
    if args.cert_manager is not False:
        wanted.append(("cert-manager", NamespacePlan(f"{name}-cert-manager-ns")))
    if args.envoy_gateway is not False:
        wanted += [(ns, NamespacePlan(f"{name}-ns-{ns}", switch=ENVOY_SWITCH)) for ns in NAMESPACES]
    wanted.append((KSERVE_NAMESPACE, NamespacePlan(f"{name}-ns-{KSERVE_NAMESPACE}")))
    return namespace_plans(wanted)


LOCAL_MANIFEST_RULE = "a YAML file; a relative path is read from the project directory"


def check_local_manifest(path: object) -> None:
    """Refuse a local manifest path that is not a file."""
    if not isinstance(path, str) or not path.strip() or not Path(path).is_file():
        raise InputError(
            f"manifest path {show(path)} is not a file (read from {Path.cwd()})",
            LOCAL_MANIFEST_RULE,
        )


def check_local_manifests(owner: str, manifests: dict[str, Optional[str]]) -> None:
    """Refuse a local manifest path that is not a file, naming `owner.args.<arg>`."""
    for arg, path in manifests.items():
        if path is not None:
            try:
                check_local_manifest(path)
            except InputError as e:
                raise e.at(f"{owner}.args.{arg}") from None


def envoy_gateway_values() -> dict[str, Any]:
    """gateway-helm's values: the Envoy AI Gateway's, and no Gateway API safe-upgrade policy of
    its own (the Gateway API install, or the cluster, owns it)."""
    return {
        **ENVOY_GATEWAY_AI_VALUES,
        "crds": {"gatewayAPI": {"safeUpgradePolicy": {"enabled": False}}},
    }


def llmisvc_resources_values(args: LLMServingInstallArgs) -> dict[str, Any]:
    """Values of kserve-llmisvc-resources: the GIE CRDs come from their release (step 3), the
    shared resources from KServe's charts when those are installed."""
    kserve: dict[str, Any] = {"llmisvc": {"createGIECRDs": False}}
    if args.kserve_installed:
        kserve["createSharedResources"] = False
    return {"kserve": kserve}


RUNTIME_CONFIG_VALUES = {
    "kserve": {"llmisvcConfigs": {"enabled": True}, "servingruntime": {"enabled": False}}
}


def gateway_class_body() -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": GATEWAY_CLASS},
        "spec": {"controllerName": GATEWAY_CONTROLLER},
    }


def gateway_body() -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": GATEWAY_NAME, "namespace": KSERVE_NAMESPACE},
        "spec": {
            "gatewayClassName": GATEWAY_CLASS,
            "listeners": [
                {
                    "name": "http",
                    "protocol": "HTTP",
                    "port": 80,
                    "allowedRoutes": {"namespaces": {"from": "All"}},
                }
            ],
            "infrastructure": {"labels": {"serving.kserve.io/gateway": GATEWAY_NAME}},
        },
    }


class LLMServingInstall(pulumi.ComponentResource):
    """Everything LLMInferenceServices need, in order; `ready` waits for all of it."""

    def __init__(
        self,
        name: str,
        args: LLMServingInstallArgs,
        opts: Optional[pulumi.ResourceOptions] = None,
    ) -> None:
        owner = f"LLMServingInstall({name!r})"
        check_local_charts(owner, {arg: getattr(args, arg) for arg in LOCAL_CHARTS})
        check_local_manifests(owner, {arg: getattr(args, arg) for arg in LOCAL_MANIFESTS})
        super().__init__("gpu-inference:index:LLMServingInstall", name, None, opts)
        self._name, self._args, self._owner = name, args, owner
        made = self._namespaces()
        after = self._prerequisites(made)
        self.ready: list[pulumi.Resource] = self._llmisvc([*after, *made.get(KSERVE_NAMESPACE, [])])
        self.versions = {
            "kserve": versions.KSERVE_VERSION,
            "cert-manager": versions.CERT_MANAGER.version,
            "gateway-api": GATEWAY_API_VERSION,
            "gateway-api-inference-extension": GIE_VERSION,
            "llm-d-router": LLMD_ROUTER_VERSION,
            "envoy-gateway": ENVOY_GATEWAY.version,
            "envoy-ai-gateway": ENVOY_AI_GATEWAY.version,
            "lws": LWS_VERSION,
        }
        self.register_outputs({})

    def _step(self, use_own: str = "enabled", arg: Optional[str] = None) -> Ownership:
        """A step's ownership: its switch is how to use the cluster's own."""
        return install_ownership(self._owner, self._args.adopt, use_own, arg)

    def _namespaces(self) -> dict[str, list[pulumi.Resource]]:
        """The namespaces this install makes, Envoy's under its own switch."""
        args = self._args
        plans = namespaces(self._name, args)
        if args.kserve_installed:
            # Beside KServeInstall its namespace is shared: that one makes it (the platform's
            # dependency on KServe waits for it).
            plans.pop(KSERVE_NAMESPACE, None)
        envoy_plans = {ns: p for ns, p in plans.items() if p.switch == ENVOY_SWITCH}
        own_plans = {ns: p for ns, p in plans.items() if p.switch != ENVOY_SWITCH}
        made = make_namespaces(own_plans, self, args.namespaces_made, self._step())
        envoy_step = self._step(ENVOY_SWITCH, "envoy_gateway")
        made.update(make_namespaces(envoy_plans, self, args.namespaces_made, envoy_step))
        return made

    def _manifest(
        self,
        suffix: str,
        url: str,
        local: Optional[str],
        ownership: Ownership,
        after: Sequence[pulumi.Resource],
    ) -> pulumi.Resource:
        return k8s.yaml.v2.ConfigFile(
            f"{self._name}-{suffix}",
            file=local or url,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(after),
                transforms=[owned_children(self, ownership)],
            ),
        )

    def _custom(
        self,
        suffix: str,
        body: dict[str, Any],
        deps: list[pulumi.Resource],
        ownership: Ownership,
    ) -> Any:
        return k8s.apiextensions.CustomResource(
            f"{self._name}-{suffix}",
            api_version=body["apiVersion"],
            kind=body["kind"],
            metadata=owned(body["metadata"]),
            spec=body["spec"],
            opts=create_opts(self, deps, ownership),
        )

    def _prerequisites(self, made: dict[str, list[pulumi.Resource]]) -> list[pulumi.Resource]:
        """cert-manager, the Gateway API and inference-extension CRDs, Envoy's gateways and
        LeaderWorkerSet, each after the one before it: what KServe's llmisvc charts wait for."""
        name, args = self._name, self._args
        after: list[pulumi.Resource] = []
        if args.cert_manager is not False:
            after = [
                chart_release(
                    f"{name}-cert-manager",
                    versions.CERT_MANAGER,
                    release="cert-manager",
                    namespace="cert-manager",
                    values={"crds": {"enabled": True, "keep": True}},
                    local_chart=args.cert_manager_chart,
                    depends_on=made.get("cert-manager", []),
                    parent=self,
                    ownership=self._step("certManager", "cert_manager"),
                )
            ]
        if args.gateway_api_crds is not False:
            gateway_api = self._step("gatewayApiCrds", "gateway_api_crds")
            after = [
                self._manifest(
                    "gateway-api-crds",
                    GATEWAY_API_MANIFEST,
                    args.gateway_api_manifest,
                    gateway_api,
                    after,
                )
            ]
        if args.inference_extension_crds is not False:
            gie_step = self._step("inferenceExtensionCrds", "inference_extension_crds")
            gie = self._manifest(
                "inference-extension-crds", GIE_MANIFEST, args.gie_manifest, gie_step, after
            )
            llmd = self._manifest(
                "llm-d-crds", LLMD_CRDS_MANIFEST, args.llmd_crds_manifest, gie_step, after
            )
            after = [gie, llmd]
        if args.envoy_gateway is not False:
            after = self._envoy(after, made)
        if args.leader_worker_set is not False:
            lws = self._step("leaderWorkerSet", "leader_worker_set")
            after = [*after, self._manifest("lws", LWS_MANIFEST, args.lws_manifest, lws, after)]
        return after

    def _envoy(
        self, after: list[pulumi.Resource], made: dict[str, list[pulumi.Resource]]
    ) -> list[pulumi.Resource]:
        """Envoy Gateway, Envoy AI Gateway and the GatewayClass KServe's Gateway names."""
        name, args = self._name, self._args
        envoy_step = self._step(ENVOY_SWITCH, "envoy_gateway")
        local = args.envoy_gateway_crds_chart
        envoy_crds = k8s.helm.v4.Chart(
            f"{name}-envoy-gateway-crds",
            chart=local or f"{ENVOY_GATEWAY_CRDS.repo}/{ENVOY_GATEWAY_CRDS.chart}",
            version=None if local else ENVOY_GATEWAY_CRDS.version,
            values=ENVOY_GATEWAY_CRDS_VALUES,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=list(after),
                transforms=[owned_children(self, envoy_step)],
            ),
        )
        envoy = chart_release(
            f"{name}-envoy-gateway",
            ENVOY_GATEWAY,
            release="eg",
            namespace=NAMESPACES[0],
            values=envoy_gateway_values(),
            local_chart=args.envoy_gateway_chart,
            depends_on=[*after, envoy_crds, *made.get(NAMESPACES[0], [])],
            parent=self,
            skip_crds=True,
            ownership=envoy_step,
        )
        ai_crds = chart_release(
            f"{name}-ai-gateway-crds",
            ENVOY_AI_GATEWAY_CRDS,
            release="aieg-crd",
            namespace=NAMESPACES[1],
            local_chart=args.ai_gateway_crds_chart,
            depends_on=[envoy, *made.get(NAMESPACES[1], [])],
            parent=self,
            ownership=envoy_step,
        )
        ai = chart_release(
            f"{name}-ai-gateway",
            ENVOY_AI_GATEWAY,
            release="aieg",
            namespace=NAMESPACES[1],
            local_chart=args.ai_gateway_chart,
            depends_on=[ai_crds],
            parent=self,
            ownership=envoy_step,
        )
        return [self._custom("gateway-class", gateway_class_body(), [ai], envoy_step)]

    def _llmisvc(self, after: list[pulumi.Resource]) -> list[pulumi.Resource]:
        """KServe's llmisvc CRD, controller and presets, and the default Gateway: what the
        platform's LLMInferenceServices wait for."""
        name, args, base = self._name, self._args, self._step()
        crd = chart_release(
            f"{name}-llmisvc-crd",
            KSERVE_LLMISVC_CRD,
            release="kserve-llmisvc-crd",
            namespace=KSERVE_NAMESPACE,
            local_chart=args.llmisvc_crd_chart,
            depends_on=after,
            parent=self,
            ownership=base,
        )
        controller = chart_release(
            f"{name}-llmisvc",
            KSERVE_LLMISVC_RESOURCES,
            release="kserve-llmisvc-resources",
            namespace=KSERVE_NAMESPACE,
            values=llmisvc_resources_values(args),
            local_chart=args.llmisvc_resources_chart,
            depends_on=[crd],
            parent=self,
            ownership=base,
        )
        configs = chart_release(
            f"{name}-llmisvc-configs",
            KSERVE_LLMISVC_CONFIGS,
            release="kserve-llmisvc-configs",
            namespace=KSERVE_NAMESPACE,
            values=RUNTIME_CONFIG_VALUES,
            local_chart=args.runtime_configs_chart,
            depends_on=[controller],
            parent=self,
            ownership=base,
        )
        ready: list[pulumi.Resource] = [configs]
        if args.gateway is not False:
            gateway = self._step("gateway", "gateway")
            ready.append(self._custom("gateway", gateway_body(), [controller], gateway))
        return ready
