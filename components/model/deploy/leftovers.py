"""What a CRD or a namespace still holds that this stack did not make, when `destroy` (or an `up`
that drops it) comes to delete it: deleting a CRD deletes every object of its kind in the
cluster, deleting a namespace everything in it. So a CRD or namespace the stack made is deleted
only when what remains in it is its own, or made from its own; otherwise it stays, and destroy
says which one and how many objects it holds.

An object counts as another's unless it is:
- this stack's: its field manager annotation (`ownership.FIELD_MANAGER_ANNOTATION`);
- already going (`metadata.deletionTimestamp`);
- made from another object (`metadata.ownerReferences`: the garbage collector deletes it with
  its owner, e.g. the Pods, ReplicaSets and InferencePools controllers make);
- made by the cluster or its controllers for every namespace or object: Events, Leases (leader
  election), Endpoints (of Services), the `default` ServiceAccount, the `kube-root-ca.crt`
  ConfigMap, ServiceAccount token Secrets;
- a Secret cert-manager issued for a Certificate that is gone (`cert-manager.io/certificate-name`:
  cert-manager v1.18 keeps a certificate's Secret after the Certificate, unless
  `--enable-certificate-owner-ref`), when it stays with a namespace whose charts made that
  Certificate.

Also pure: marking CRDs of a Helm release record `helm.sh/resource-policy: keep`, which Helm
reads from the release's stored manifest when it uninstalls (helm v3.20.2
`pkg/action/uninstall.go` `deleteRelease` -> `filterManifestsToKeep`, the version
pulumi-kubernetes v4.34 vendors): the CRDs of a release that still hold others' objects are left
in place, the release's other objects uninstalled as usual.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Optional

import yaml

from .ownership import manager_of

NOISE_KINDS = frozenset({"Event", "Lease", "Endpoints"})
"""Kinds the cluster's controllers make and remove by themselves."""
CLUSTER_MADE = frozenset({("ServiceAccount", "default"), ("ConfigMap", "kube-root-ca.crt")})
"""Objects the cluster makes in every namespace."""
CERTIFICATE_ANNOTATION = "cert-manager.io/certificate-name"
KEEP_ANNOTATION = "helm.sh/resource-policy"
SHOWN = 5
"""How many of the objects held a message names."""


def is_others(obj: Mapping[str, Any], manager: str, live_certificates: Iterable[str] = ()) -> bool:
    """Whether `obj` was made by someone else than this stack (`manager`) and its controllers."""
    meta = obj.get("metadata") or {}
    kind = str(obj.get("kind", ""))
    if manager_of(obj) == manager or meta.get("deletionTimestamp"):
        return False
    if meta.get("ownerReferences"):
        return False
    if kind in NOISE_KINDS or (kind, meta.get("name")) in CLUSTER_MADE:
        return False
    if kind == "Secret":
        if obj.get("type") == "kubernetes.io/service-account-token":
            return False
        certificate = (meta.get("annotations") or {}).get(CERTIFICATE_ANNOTATION)
        if certificate and certificate not in set(live_certificates):
            return False
    return True


def others(
    objects: Iterable[Mapping[str, Any]], manager: str, live_certificates: Iterable[str] = ()
) -> list[str]:
    """The objects of others among `objects`, as `Kind namespace/name`, sorted."""
    certificates = set(live_certificates)
    found = []
    for obj in objects:
        if is_others(obj, manager, certificates):
            meta = obj.get("metadata") or {}
            ns = meta.get("namespace")
            found.append(f"{obj.get('kind', '?')} {ns + '/' if ns else ''}{meta.get('name', '?')}")
    return sorted(found)


def kept_message(what: str, held: list[str]) -> str:
    """What destroy says of a CRD or namespace it leaves because it holds others' objects."""
    shown = ", ".join(held[:SHOWN]) + (
        f" and {len(held) - SHOWN} more" if len(held) > SHOWN else ""
    )
    n = len(held)
    return (
        f"kept {what}: it holds {n} object{'s' if n != 1 else ''} this stack did not make "
        f"({shown}); delete {'them' if n != 1 else 'it'} first, then `kubectl delete` it by hand "
        "if it should go"
    )


def release_crds(manifest: str) -> list[str]:
    """The names of the CustomResourceDefinitions in a Helm release's manifest."""
    names = []
    for doc in yaml.safe_load_all(manifest):
        if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
            name = (doc.get("metadata") or {}).get("name")
            if isinstance(name, str):
                names.append(name)
    return names


def keep_crds(manifest: str, names: Iterable[str]) -> str:
    """A release manifest with the CRDs `names` marked `helm.sh/resource-policy: keep`; every
    other document, the `---` separators and each document's `# Source:` line as they were."""
    wanted = set(names)
    docs: list[list[str]] = [[]]
    for line in manifest.split("\n"):
        if re.fullmatch(r"---\s*", line):
            docs.append([line])
        else:
            docs[-1].append(line)
    out: list[str] = []
    for lines in docs:
        n = 0
        while n < len(lines) and (
            not lines[n].strip() or lines[n].lstrip().startswith("#") or lines[n].startswith("---")
        ):
            n += 1
        body = "\n".join(lines[n:])
        doc = yaml.safe_load(body) if body.strip() else None
        if (
            isinstance(doc, dict)
            and doc.get("kind") == "CustomResourceDefinition"
            and (doc.get("metadata") or {}).get("name") in wanted
        ):
            meta = doc.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}), KEEP_ANNOTATION: "keep"}
            dumped = yaml.safe_dump(doc, sort_keys=False).rstrip("\n").split("\n")
            tail = [""] if body.endswith("\n") else []
            lines = [*lines[:n], *dumped, *tail]
        out += lines
    return "\n".join(out)


def certificates_named(objects: Iterable[Mapping[str, Any]]) -> list[str]:
    """The names of the cert-manager Certificates among `objects`."""
    return [
        str((o.get("metadata") or {}).get("name"))
        for o in objects
        if o.get("kind") == "Certificate"
        and str(o.get("apiVersion", "")).startswith("cert-manager.io/")
    ]


def storage_version(crd: Mapping[str, Any]) -> Optional[str]:
    """`group/version` a CRD's objects are listed at (its storage version, else its first
    served one)."""
    spec = crd.get("spec") or {}
    versions = spec.get("versions") or []
    chosen = next((v for v in versions if v.get("storage")), None) or next(
        (v for v in versions if v.get("served")), None
    )
    if chosen is None or not spec.get("group"):
        return None
    return f"{spec['group']}/{chosen['name']}"
