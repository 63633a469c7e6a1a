"""Knative Serving's `config-features` keys, and which of them a pod's scheduling fields need.

Pure (imports no Pulumi): the stack config, the `KnativeServing` component, the InferenceService
check and the policy pack all read these tables. Source: knative/serving at `knative-v1.23.0` (the
Serving the pinned knative-operator v1.23.0 installs): the keys `NewFeaturesConfigFromMap` reads in
`pkg/apis/config/features.go` (the same as `config/core/configmaps/features.yaml`). There,
`kubernetes.podspec-dryrun` is gone and `kubernetes.podspec-volumes-csi`, `-volumes-ephemeral`
and `-volumes-image` are new. The Knative Operator's `spec.config.features` accepts any key, so a
typo would be silently ignored: we refuse it.
"""

KNATIVE_FEATURES = (
    "autodetect-http2",
    "kubernetes.containerspec-addcapabilities",
    "kubernetes.podspec-affinity",
    "kubernetes.podspec-dnsconfig",
    "kubernetes.podspec-dnspolicy",
    "kubernetes.podspec-fieldref",
    "kubernetes.podspec-hostaliases",
    "kubernetes.podspec-hostipc",
    "kubernetes.podspec-hostnetwork",
    "kubernetes.podspec-hostpid",
    "kubernetes.podspec-init-containers",
    "kubernetes.podspec-nodeselector",
    "kubernetes.podspec-persistent-volume-claim",
    "kubernetes.podspec-persistent-volume-write",
    "kubernetes.podspec-priorityclassname",
    "kubernetes.podspec-runtimeclassname",
    "kubernetes.podspec-schedulername",
    "kubernetes.podspec-securitycontext",
    "kubernetes.podspec-shareprocessnamespace",
    "kubernetes.podspec-tolerations",
    "kubernetes.podspec-topologyspreadconstraints",
    "kubernetes.podspec-volumes-csi",
    "kubernetes.podspec-volumes-emptydir",
    "kubernetes.podspec-volumes-ephemeral",
    "kubernetes.podspec-volumes-hostpath",
    "kubernetes.podspec-volumes-image",
    "kubernetes.podspec-volumes-mount-propagation",
    "multi-container",
    "multi-container-probing",
    "queueproxy.mount-podinfo",
    "queueproxy.resource-defaults",
    "secure-pod-defaults",
    "tag-header-based-routing",
)
KNATIVE_FEATURE_VALUES = ("enabled", "disabled", "allowed")
# `secure-pod-defaults` takes its own values (`asSecurePodDefaultsFlag`: Disabled,
# AllowRootBounded, Enabled; case-insensitive); any other value is ignored.
SECURE_POD_DEFAULTS_VALUES = ("enabled", "disabled", "AllowRootBounded")


def feature_values(name: str) -> tuple[str, ...]:
    """The values Knative Serving reads for feature `name`."""
    return SECURE_POD_DEFAULTS_VALUES if name == "secure-pod-defaults" else KNATIVE_FEATURE_VALUES


# The pod spec field a KServe component sets -> the Knative flag that must be "enabled" for the
# Knative webhook to accept it ("must not set the field(s): spec.template.spec.tolerations").
POD_FIELD_FLAGS = {
    "nodeSelector": "kubernetes.podspec-nodeselector",
    "affinity": "kubernetes.podspec-affinity",
    "tolerations": "kubernetes.podspec-tolerations",
}
PODSPEC_FLAGS = tuple(POD_FIELD_FLAGS.values())
HOST_IPC_FLAG = "kubernetes.podspec-hostipc"
"""The flag a Serverless pod with `hostIPC: true` needs (GKE MPS pools); off by default."""


def required_features(pod_fields: "frozenset[str] | set[str] | list[str]") -> list[str]:
    """The Knative flags a pod carrying these scheduling fields needs, in a stable order."""
    return [POD_FIELD_FLAGS[f] for f in sorted(pod_fields) if f in POD_FIELD_FLAGS]


def enabled_pod_fields(features: "dict[str, str]") -> frozenset[str]:
    """The scheduling fields a Serverless pod may carry under these feature values."""
    return frozenset(f for f, flag in POD_FIELD_FLAGS.items() if features.get(flag) == "enabled")
