"""The cluster as the deploy-time hooks see it: a few reads and writes through the official
Kubernetes Python client, reached the way the kubernetes provider reaches it (the same kubeconfig
and context). `Cluster` is the interface the hooks use, so that tests give them a fake."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional, Protocol

TIMEOUT = 30
"""Seconds each API call may take: a hook must not hang an `up`."""

_DISCOVERY = threading.Lock()
"""Held while the dynamic client's discovery is read or refreshed. Hooks run in threads, and the
client's discoverer is not thread-safe: one hook refreshing it (a fresh cache without its
`resources`) while another searched it raised KeyError('resources'), and destroy kept namespaces
kserve and envoy-gateway-system as unreadable (e2e, the LLM add-on's destroy). Its on-disk cache is
one file per API server, so the lock is the process's, not a cluster's."""


@dataclass(frozen=True)
class Target:
    """Where the provider talks: its kubeconfig (a path or the document itself; None: the ambient
    one, `$KUBECONFIG` else `~/.kube/config`) and context (None: the kubeconfig's current one)."""

    kubeconfig: Optional[str] = None
    context: Optional[str] = None


class Cluster(Protocol):
    def get(
        self, api_version: str, kind: str, name: str, namespace: Optional[str]
    ) -> Optional[dict[str, Any]]: ...

    def secrets(self, namespace: str, selector: str) -> list[dict[str, Any]]: ...

    def delete_secret(self, namespace: str, name: str) -> None: ...

    def create_secret(self, namespace: str, body: Mapping[str, Any]) -> None: ...

    def replace_secret_data(self, namespace: str, name: str, data: Mapping[str, str]) -> None: ...

    def objects(
        self, api_version: str, kind: str, namespace: Optional[str] = None
    ) -> list[dict[str, Any]]: ...

    def namespaced(self, namespace: str) -> list[dict[str, Any]]: ...

    def delete(self, api_version: str, kind: str, name: str, namespace: Optional[str]) -> None: ...

    def patch_node(self, name: str, ops: Sequence[Mapping[str, Any]], manager: str) -> None: ...


def _is_document(kubeconfig: str) -> bool:
    text = kubeconfig.lstrip()
    return "\n" in text or text.startswith(("{", "apiVersion"))


class LiveCluster:
    """`Cluster` over the Kubernetes Python client."""

    def __init__(self, target: Target) -> None:
        import yaml
        from kubernetes import config  # imported here: only hooks need the client

        if target.kubeconfig and _is_document(target.kubeconfig):
            self.api = config.new_client_from_config_dict(
                yaml.safe_load(target.kubeconfig), context=target.context, persist_config=False
            )
        else:
            path = os.path.expanduser(target.kubeconfig) if target.kubeconfig else None
            self.api = config.new_client_from_config(
                config_file=path, context=target.context, persist_config=False
            )
        self._dynamic: Any = None

    def get(
        self, api_version: str, kind: str, name: str, namespace: Optional[str]
    ) -> Optional[dict[str, Any]]:
        from kubernetes import dynamic
        from kubernetes.client.exceptions import ApiException

        try:
            res = self._resource(api_version, kind)
            obj = res.get(name=name, namespace=namespace, _request_timeout=TIMEOUT)
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        except dynamic.exceptions.ResourceNotFoundError:
            return None  # the kind is not served (its CRD is not installed): no object either
        out: dict[str, Any] = obj.to_dict()
        return out

    def secrets(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        from kubernetes import client

        found = client.CoreV1Api(self.api).list_namespaced_secret(
            namespace, label_selector=selector, _request_timeout=TIMEOUT
        )
        return [self.api.sanitize_for_serialization(s) for s in found.items]

    def delete_secret(self, namespace: str, name: str) -> None:
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        try:
            client.CoreV1Api(self.api).delete_namespaced_secret(
                name, namespace, _request_timeout=TIMEOUT
            )
        except ApiException as e:
            if e.status != 404:
                raise

    def _resource(self, api_version: str, kind: str) -> Any:
        """A kind's API resource; discovery read again before a kind is said not to be served
        (the client caches discovery, also on disk: a CRD made since would look absent, and
        "no objects of it" must never come from a stale cache)."""
        from kubernetes import dynamic

        with _DISCOVERY:
            try:
                return self._dyn().resources.get(api_version=api_version, kind=kind)
            except dynamic.exceptions.ResourceNotFoundError:
                self._dyn().resources.invalidate_cache()
                return self._dyn().resources.get(api_version=api_version, kind=kind)

    def _dyn(self) -> Any:
        from kubernetes import dynamic

        if self._dynamic is None:
            self._dynamic = dynamic.DynamicClient(self.api)
        return self._dynamic

    def objects(
        self, api_version: str, kind: str, namespace: Optional[str] = None
    ) -> list[dict[str, Any]]:
        """Every object of a kind (in `namespace`, else in all), as dicts; [] when the kind is
        not served."""
        from kubernetes import dynamic

        try:
            res = self._resource(api_version, kind)
        except dynamic.exceptions.ResourceNotFoundError:
            return []
        found = res.get(namespace=namespace, _request_timeout=TIMEOUT).to_dict()
        items: list[dict[str, Any]] = found.get("items") or []
        for item in items:  # a list's items carry neither
            item.setdefault("apiVersion", api_version)
            item.setdefault("kind", kind)
        return items

    def namespaced(self, namespace: str) -> list[dict[str, Any]]:
        """Every object in `namespace`: each namespaced kind the API serves and lists (its
        preferred version; subresources and the aggregated metrics API left out)."""
        from kubernetes.client.exceptions import ApiException
        from kubernetes.dynamic.resource import ResourceList

        resources: list[Any] = []
        for attempt in range(3):
            try:
                with _DISCOVERY:
                    # Discovery as it is now (CRDs come and go during a destroy; it is cached).
                    self._dyn().resources.invalidate_cache()
                    resources = list(self._dyn().resources.search())
                break
            except (KeyError, ApiException):  # a group that went away while being read
                if attempt == 2:
                    raise
                time.sleep(1)
        seen: set[tuple[str, str]] = set()
        out: list[dict[str, Any]] = []
        for res in resources:
            group = getattr(res, "group", "") or ""
            if (
                isinstance(res, ResourceList)  # the `<Kind>List` entries discovery adds
                or not getattr(res, "namespaced", False)
                or "/" in str(getattr(res, "name", ""))
                or "list" not in (getattr(res, "verbs", None) or ())
                or group == "metrics.k8s.io"
                or not getattr(res, "preferred", True)
                or (group, res.kind) in seen
            ):
                continue
            seen.add((group, res.kind))
            try:
                out += self.objects(res.group_version, res.kind, namespace)
            except ApiException as e:
                if e.status != 404:  # a kind whose CRD just went: nothing of it is left
                    raise
        return out

    def delete(self, api_version: str, kind: str, name: str, namespace: Optional[str]) -> None:
        from kubernetes.client.exceptions import ApiException

        res = self._resource(api_version, kind)
        try:
            res.delete(name=name, namespace=namespace, _request_timeout=TIMEOUT)
        except ApiException as e:
            if e.status != 404:
                raise

    def replace_secret_data(self, namespace: str, name: str, data: Mapping[str, str]) -> None:
        from kubernetes import client

        body: Any = {"data": dict(data)}
        client.CoreV1Api(self.api).patch_namespaced_secret(
            name, namespace, body, _request_timeout=TIMEOUT
        )

    def create_secret(self, namespace: str, body: Mapping[str, Any]) -> None:
        from kubernetes import client

        secret: Any = {"apiVersion": "v1", "kind": "Secret", **body}  # the client takes a dict
        client.CoreV1Api(self.api).create_namespaced_secret(
            namespace, secret, _request_timeout=TIMEOUT
        )

    def patch_node(self, name: str, ops: Sequence[Mapping[str, Any]], manager: str) -> None:
        from kubernetes import client

        client.CoreV1Api(self.api).patch_node(
            name,
            [dict(o) for o in ops],
            field_manager=manager,
            _content_type="application/json-patch+json",
            _request_timeout=TIMEOUT,
        )
