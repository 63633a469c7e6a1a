"""Every namespace a stack makes, made once, by the platform.

An install used alone makes its own namespaces (`namespaces()` in each install's module says which,
under which resource name). In a stack the same namespace can be wanted by several parts, and by
different parts as the config changes: `kserve` by KServeInstall, or by LLMServingInstall when
`addons.kserve.enabled` is false; `seldon-mesh` by SeldonCoreInstall, or by the models' namespace
when `addons.seldon.enabled` is false. Were each part to make it, a toggle would move the namespace
to another resource, and Pulumi would create the new one (an upsert of the live namespace) and then
delete the old one: the namespace, with everything in it, gone (pulumi-kubernetes'
`upsertExistingObjects`, CHANGELOG 4.29.0). So the platform makes each namespace once, as one
resource named after the namespace alone, and tells the parts it has (`namespaces_made`). Each
carries an alias for every resource a part made it as before this rule, so that a stack deployed
earlier keeps its namespaces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from ..model.deploy.ownership import NamespacePlan, Ownership, config_section, install_ownership
from ..serving import (
    cert_manager,
    karpenter_install,
    knative,
    kserve_install,
    llm_install,
    model_namespace,
    nvidia_device_plugin,
    nvidia_dra_driver,
    seldon_install,
)
from .addons import karpenter_install_args
from .config import Spec
from .derive import args_from

TOKEN = "gpu-inference:index:"
NAMESPACE = "gpu-inference"


@dataclass(frozen=True)
class NamespaceUse:
    """One part's namespaces: the component that makes them when used alone, its name, and its
    plans. `install`: an install's labels win over a models' namespace's on the same namespace
    (Seldon's Pod Security level on its runtime namespace). `active`: the part is in the stack
    (an inactive one only names resources a namespace may have been made as, for aliases)."""

    component_type: str
    component_name: str
    plans: Mapping[str, NamespacePlan]
    install: bool = True
    active: bool = True
    ownership: Optional[Ownership] = None
    """How the part treats a namespace of that name that exists and is not the stack's."""


@dataclass(frozen=True)
class StackNamespace:
    """A namespace the platform makes: its labels and the resources parts made it as before
    (component type, component name, resource name), for aliases."""

    labels: dict[str, str] = field(default_factory=dict)
    previous: tuple[tuple[str, str, str], ...] = ()
    ownership: Optional[Ownership] = None
    """The first part's (an install's before the models'), adopting when any part adopts."""


def stack_namespaces(uses: Sequence[NamespaceUse]) -> dict[str, StackNamespace]:
    """namespace -> what the platform makes (the namespaces of the active parts), in first-use
    order. Labels: the models' namespaces' first, then the installs' over them. Previous
    resources: those of every part, active or not, that would make it (a stack deployed earlier
    may have had the part on)."""
    labels: dict[str, dict[str, str]] = {}
    previous: dict[str, list[tuple[str, str, str]]] = {}
    for use in sorted(uses, key=lambda u: u.install):  # models' first (stable sort)
        for ns, plan in use.plans.items():
            if use.active:
                labels.setdefault(ns, {}).update(plan.labels)
            previous.setdefault(ns, []).append(
                (use.component_type, use.component_name, plan.resource)
            )
    order = list(dict.fromkeys(ns for use in uses if use.active for ns in use.plans))
    return {
        ns: StackNamespace(
            dict(sorted(labels[ns].items())), tuple(previous[ns]), _ownership(uses, ns)
        )
        for ns in order
    }


def _ownership(uses: Sequence[NamespaceUse], ns: str) -> Optional[Ownership]:
    wanting = [u for u in uses if u.active and ns in u.plans and u.ownership is not None]
    wanting.sort(key=lambda u: not u.install)  # an install's ways out first
    if not wanting:
        return None
    first = wanting[0].ownership
    assert first is not None
    return replace(first, adopt=any(u.ownership and u.ownership.adopt for u in wanting))


def model_namespace_names(spec: Spec) -> list[str]:
    """The models' namespaces a `ModelNamespace` serves (Seldon's, when the Seldon install runs,
    is the install's)."""
    seldon_ns = spec.seldon.namespace
    return [
        ns for ns in spec.model_namespaces() if not (ns == seldon_ns and spec.addons.seldon.enabled)
    ]


def namespace_uses(name: str, spec: Spec, sources: Mapping[str, Any]) -> list[NamespaceUse]:
    """Which parts of the stack `name` want which namespaces, from the arguments the platform gives
    them (the component names are the platform's); the parts that are off, inactive, with the
    namespaces they would make."""
    a = spec.addons
    uses: list[NamespaceUse] = []
    served = model_namespace_names(spec)
    for ns in dict.fromkeys([*served, spec.seldon.namespace]):
        comp = f"{name}-ns-{ns}"
        args = args_from(spec.namespaces, model_namespace.ModelNamespaceArgs, namespace=ns)
        plans = model_namespace.namespaces(comp, args)
        with config_section(f"{NAMESPACE}:namespaces"):
            owns = install_ownership(f"ModelNamespace({comp!r})", args.adopt, use_own=None)
        uses.append(NamespaceUse(TOKEN + "ModelNamespace", comp, plans, False, ns in served, owns))
    args = args_from(spec.knative, knative.KnativeServingArgs, sources=sources)
    comp = f"{name}-knative"
    operator = knative.namespaces(comp, replace(args, mode="operator"))
    active = spec.knative.mode not in ("none", "patch")
    with config_section(f"{NAMESPACE}:knative"):
        owns = install_ownership(f"KnativeServing({comp!r})", args.adopt, "mode", "mode", "patch")
    uses.append(NamespaceUse(TOKEN + "KnativeServing", comp, operator, True, active, owns))
    comp = f"{name}-karpenter"
    k_args = karpenter_install_args(spec)
    plans = karpenter_install.namespaces(comp, k_args)
    with config_section(f"{NAMESPACE}:addons.karpenter"):
        owns = install_ownership(f"KarpenterInstall({comp!r})", k_args.adopt)
    uses.append(
        NamespaceUse(TOKEN + "KarpenterInstall", comp, plans, True, a.karpenter.enabled, owns)
    )
    installs: list[tuple[bool, str, str, str, Any, Any, type]] = [
        (a.cert_manager.enabled, "CertManager", "cert-manager", "certManager",
         cert_manager.namespaces, a.cert_manager, cert_manager.CertManagerArgs),
        (a.kserve.enabled, "KServeInstall", "kserve", "kserve", kserve_install.namespaces,
         a.kserve, kserve_install.KServeInstallArgs),
        (a.kserve.llm.enabled, "LLMServingInstall", "kserve-llm", "kserve.llm",
         llm_install.namespaces, a.kserve.llm, llm_install.LLMServingInstallArgs),
        (a.seldon.enabled, "SeldonCoreInstall", "seldon", "seldon", seldon_install.namespaces,
         a.seldon, seldon_install.SeldonCoreInstallArgs),
        (a.nvidia_device_plugin.enabled, "NvidiaDevicePlugin", "nvidia-device-plugin",
         "nvidiaDevicePlugin", nvidia_device_plugin.namespaces, a.nvidia_device_plugin,
         nvidia_device_plugin.NvidiaDevicePluginArgs),
        (a.dra_driver.enabled, "NvidiaDraDriver", "dra-driver", "draDriver",
         nvidia_dra_driver.namespaces, a.dra_driver, nvidia_dra_driver.NvidiaDraDriverArgs),
    ]  # fmt: skip
    for enabled, typ, suffix, key, plans_of, section, args_type in installs:
        given: dict[str, Any] = {}
        if args_type is llm_install.LLMServingInstallArgs:
            given["cert_manager"] = False  # the stack's one cert-manager is its own
        args = args_from(section, args_type, sources=sources, **given)
        comp = f"{name}-{suffix}"
        plans = plans_of(comp, args)
        for switch in dict.fromkeys(p.switch for p in plans.values()):
            # A step's namespaces name the step's switch as the way to the cluster's own.
            with config_section(f"{NAMESPACE}:addons.{key}"):
                owns = install_ownership(f"{typ}({comp!r})", args.adopt, switch or "enabled")
            part = {ns: p for ns, p in plans.items() if p.switch == switch}
            uses.append(NamespaceUse(TOKEN + typ, comp, part, True, bool(enabled), owns))
    return uses
