"""The named value syntaxes a field may declare (`Stack.syntax`: `labels`, `pool-name`, `quantity`,
...), each a plain check that raises `InputError` (with the sub-path of the bad part). One source
for both entry paths: the stack config wraps each in its pydantic type (`platform/syntax.py`), the
Python args run it in `inputs.check_declared`.

Pure: imports no Pulumi and no pydantic."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from .errors import InputError, show, too_short
from .nodes.aks_shapes import parse_kubernetes_version
from .scheduling import (
    LABEL_KEY_RULE,
    LABEL_VALUE_RULE,
    label_key_problem,
    label_value_problem,
    parse_quantity,
    validate_dns1035_label,
    validate_dns1123_label,
    validate_dns1123_subdomain,
)
from .serving.env import SECRET_ONLY, env_value

POOL_NAME_MAX = 40
"""Pool names are DNS-1123 labels of at most 40 characters, so every cloud name derived from
them fits (GKE node pool names are at most 40 characters; EKS allows more)."""
SERVER_NAME_MAX = 52
"""A StatefulSet's pods get label `controller-revision-hash: <name>-<hash>`, which must fit a
63-character label value (kubernetes/kubernetes#64023): Seldon Servers are StatefulSets."""
STORAGE_SCHEMES = (
    "gs://",
    "s3://",
    "pvc://",
    "file://",
    "https://",
    "http://",
    "hdfs://",
    "webhdfs://",
    "oci://",
    "hf://",
)
"""KServe's storage initializer (plus the schemes newer releases added)."""

_MODEL_FORMAT = re.compile(r"^[a-z0-9][-a-z0-9_.]*$")
_CAPABILITY = re.compile(r"^[A-Za-z0-9][-A-Za-z0-9_.]*$")
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$")
_EKS_CLUSTER_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9\-_]{0,99}$")
EKS_CLUSTER_NAME_RULE = (
    "1-100 letters, digits, '-' or '_', starting with a letter or digit (a plain string: it is "
    "part of the autoscaler's tag key)"
)
_GCP_ZONE = re.compile(r"^[a-z]+-[a-z]+[0-9]+-[a-z]$")
_GCP_SA_EMAIL = re.compile(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]@[-a-z0-9.:]+\.gserviceaccount\.com$")
_AGENT_POOL_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
AKS_SPOT_PRICE_DECIMALS = 5
"""`SpotMaxPrice`: -1 or a positive value with up to five decimal places (`spot-node-pool.md`
@31e1f80a, Limitations)."""


def key_path(key: str) -> str:
    """A map key as a path segment: `.key`, or `["key"]` when it holds '.' or '/'."""
    return f".{key}" if re.match(r"^[A-Za-z0-9_-]+$", key) else f"[{json.dumps(key)}]"


def pool_name(v: object) -> str:
    return validate_dns1123_label(v, max_length=POOL_NAME_MAX)


def dns1123(v: object) -> str:
    return validate_dns1123_label(v)


def dns1035(v: object) -> str:
    return validate_dns1035_label(v)


def server_name(v: object) -> str:
    return validate_dns1123_label(v, max_length=SERVER_NAME_MAX)


def label_key(v: str) -> str:
    problem = label_key_problem(v)
    if problem:
        raise InputError(problem, LABEL_KEY_RULE)
    return v


def label_value(v: str) -> str:
    problem = label_value_problem(v)
    if problem:
        raise InputError(problem, LABEL_VALUE_RULE)
    return v


def label_keys(v: Sequence[str]) -> Sequence[str]:
    """At least one label key."""
    if not v:
        raise too_short(1)
    for i, key in enumerate(v):
        try:
            label_key(key)
        except InputError as e:
            raise e.at(f"[{i}]") from None
    return v


def labels(v: Mapping[str, str]) -> Mapping[str, str]:
    for key, value in v.items():
        for problem, rule in (
            (label_key_problem(key), LABEL_KEY_RULE),
            (label_value_problem(value), LABEL_VALUE_RULE),
        ):
            if problem:
                raise InputError(problem, rule, key_path(key))
    return v


def quantity(v: Any) -> Any:
    parse_quantity(v)
    return v


def resources(v: Mapping[str, Any]) -> Mapping[str, Any]:
    """Resource name -> a quantity."""
    for key, value in v.items():
        try:
            parse_quantity(value)
        except InputError as e:
            raise e.at(key_path(key)) from None
    return v


def version(v: str) -> str:
    if not _VERSION.match(v):
        raise InputError(
            f"{show(v)} is not a version", "a release version like 'v1.16.0' or '0.15.2'"
        )
    return v


def storage_uri(v: str) -> str:
    if not v.startswith(STORAGE_SCHEMES) or v.endswith("://"):
        raise InputError(
            f"{show(v)} is not a storage URI KServe / Seldon can fetch",
            "a URI starting with " + ", ".join(STORAGE_SCHEMES),
        )
    return v


def env(v: Mapping[str, Any]) -> Mapping[str, Any]:
    """Names checked; each value a string or a value from a Secret (`model.serving.env`)."""
    for name, value in v.items():
        if not _ENV_NAME.match(name):
            raise InputError(
                f"{show(name)} is not an environment variable name",
                "letters, digits, '_', '-' or '.', not starting with a digit",
                key_path(name),
            )
        try:
            env_value(value, SECRET_ONLY)
        except InputError as e:
            raise e.at(key_path(name)) from None
    return v


def pool_ref(v: Any) -> Any:
    """A pool name, or a non-empty list of pool names in preference order (no duplicates)."""
    if isinstance(v, str):
        if not v:
            raise InputError("the pool name is empty", "a pool name, or a list of pool names")
        return v
    if isinstance(v, list):
        if not v:
            raise InputError(
                "the pool list is empty", "one pool name, or pool names in preference order"
            )
        for i, name in enumerate(v):
            if not isinstance(name, str) or not name:
                raise InputError(f"{show(name)} is not a pool name", "a pool name", f"[{i}]")
        for i, name in enumerate(v):
            if name in v[:i]:
                raise InputError(
                    f"pool {name!r} is listed twice",
                    "each pool once, in preference order",
                    f"[{i}]",
                )
        return v
    raise InputError(
        f"expected a pool name or a list of pool names, got {show(v)}",
        "a pool name, or a list of pool names in preference order (spot first, on-demand next)",
    )


def kubernetes_version(v: str) -> str:
    """A Kubernetes release as a pool or cluster names it: `1.33`, `1.33.2` or `v1.33.2`."""
    if parse_kubernetes_version(v) is None:
        raise InputError(
            f"Kubernetes version {show(v)} is not MAJOR.MINOR[.PATCH]", "e.g. 1.33 or 1.33.2"
        )
    return v


def eks_cluster_name(v: str) -> str:
    """An EKS cluster's name (`CreateCluster`'s `name` pattern)."""
    if not _EKS_CLUSTER_NAME.match(v):
        raise InputError(
            f"cluster name {show(v)} is not an EKS cluster name", EKS_CLUSTER_NAME_RULE
        )
    return v


def gcp_zones(v: Sequence[str]) -> Sequence[str]:
    """Zone names of a Google Cloud region (`us-central1-a`), at least one, each once."""
    if not v:
        raise too_short(1)
    for i, zone in enumerate(v):
        if not isinstance(zone, str) or not _GCP_ZONE.match(zone) or zone in v[:i]:
            raise InputError(
                f"{show(zone)} is not a zone name, or is listed twice",
                "zone names such as 'us-central1-a', each once",
                f"[{i}]",
            )
    return v


def gcp_service_account(v: str) -> str:
    """A Google service account's email."""
    if not _GCP_SA_EMAIL.match(v):
        raise InputError(
            f"{show(v)} is not a service account email", "NAME@PROJECT.iam.gserviceaccount.com"
        )
    return v


def gce_reservations(v: Sequence[str]) -> Sequence[str]:
    """Names of Compute Engine reservations, at least one (each as a pool name is checked)."""
    if not v:
        raise too_short(1)
    for i, r in enumerate(v):
        try:
            pool_name(r)
        except InputError:
            raise InputError(
                f"reservation name {show(r)} is not a Compute Engine resource name",
                "lower-case letters, digits and '-', starting with a letter",
                f"[{i}]",
            ) from None
    return v


def node_names(v: Sequence[str]) -> Sequence[str]:
    """Kubernetes node names (DNS-1123 subdomains), at least one, each once."""
    if not v:
        raise too_short(1)
    for i, node in enumerate(v):
        try:
            validate_dns1123_subdomain(node)
        except InputError as e:
            raise e.at(f"[{i}]") from None
        if node in v[:i]:
            raise InputError(f"node {node!r} is listed twice", "each node once", f"[{i}]")
    return v


def aks_agent_pool_name(v: str) -> str:
    """An AKS agent pool's name (`AgentPoolName` in the AKS API)."""
    if not _AGENT_POOL_NAME.match(v):
        raise InputError(
            f"agent pool name {show(v)} is not an AKS node pool name",
            "1-12 lowercase letters and digits, starting with a letter",
        )
    return v


def aks_spot_price(v: float) -> float:
    """AKS's `spotMaxPrice`: US dollars above 0 with at most five decimals, or -1."""
    if v <= 0 and v != -1:
        raise InputError(
            f"spot max price {show(v)} is not a price",
            "a price in US dollars above 0, or -1 (up to the on-demand price)",
        )
    exponent = Decimal(repr(float(v))).normalize().as_tuple().exponent
    if v != -1 and not (isinstance(exponent, int) and -exponent <= AKS_SPOT_PRICE_DECIMALS):
        raise InputError(
            f"spot max price {show(v)} has more than {AKS_SPOT_PRICE_DECIMALS} decimals, which "
            "AKS refuses",
            f"a price with at most {AKS_SPOT_PRICE_DECIMALS} decimals (e.g. 0.98765), or -1",
        )
    return v


def azure_zones(v: Sequence[str]) -> Sequence[str]:
    """Zone numbers of an Azure region (`["1", "2"]`), at least one."""
    if not v or any(not isinstance(z, str) or not z.isdigit() for z in v):
        raise InputError(
            f"availability zones {show(list(v))} are not a list of zone numbers",
            'a list such as ["1", "2", "3"]',
        )
    return v


def model_format(v: str) -> str:
    # The InferenceService component's rule for `modelFormat.name` (serving/inference_service.py).
    if not _MODEL_FORMAT.match(v):
        raise InputError(
            f"model format {show(v)} is not a format name",
            "lowercase letters, digits, '-', '_' or '.', e.g. sklearn, huggingface, pytorch",
        )
    return v


def capabilities(v: Sequence[str]) -> Sequence[str]:
    """Seldon capabilities / requirements: one token each (SELDON_SERVER_CAPABILITIES is a comma
    list), each once; the Seldon components' rule (serving/seldon.py)."""
    for i, c in enumerate(v):
        if not _CAPABILITY.match(c):
            raise InputError(
                f"capability {show(c)} is not valid",
                "letters, digits, '-', '_' or '.', no commas or spaces (e.g. 'model-on-gpu')",
                f"[{i}]",
            )
        if c in v[:i]:
            raise InputError(f"capability {c!r} is listed twice", "each once", f"[{i}]")
    return v


SHAPES: dict[Any, tuple[str, tuple[type, ...]]] = {
    str: ("a string", (str,)),
    Mapping: ("a mapping (key: value)", (Mapping,)),
    list: ("a list", (list, tuple)),
    float: ("a number", (int, float)),
    object: ("", (object,)),
}
"""A syntax's shape -> (how the stack config words a value of another shape, the Python types
of that shape)."""

CHECKS: dict[str, tuple[Any, Callable[[Any], Any], tuple[type, ...]]] = {
    "pool-name": (str, pool_name, ()),
    "label-keys": (list, label_keys, ()),
    "dns1123": (str, dns1123, ()),
    "dns1035": (str, dns1035, ()),
    "server-name": (str, server_name, ()),
    "label-key": (str, label_key, ()),
    "labels": (Mapping, labels, ()),
    "quantity": (object, quantity, ()),
    "version": (str, version, ()),
    "storage-uri": (str, storage_uri, ()),
    "env": (Mapping, env, (list, tuple)),
    "pool-ref": (object, pool_ref, ()),
    "capabilities": (list, capabilities, ()),
    "resources": (Mapping, resources, ()),
    "kubernetes-version": (str, kubernetes_version, ()),
    "aks-agent-pool-name": (str, aks_agent_pool_name, ()),
    "eks-cluster-name": (str, eks_cluster_name, ()),
    "gcp-zones": (list, gcp_zones, ()),
    "gcp-service-account": (str, gcp_service_account, ()),
    "gce-reservations": (list, gce_reservations, ()),
    "node-names": (list, node_names, ()),
    "aks-spot-price": (float, aks_spot_price, ()),
    "azure-zones": (list, azure_zones, ()),
}
"""A declared `syntax` -> (the shape of its values, the check, other forms the Python args take
and the component judges: env as a list of name/value pairs)."""
