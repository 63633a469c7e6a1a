"""What a program sends the engine, whole: for holding a resource we register without its SDK
class (or an invoke made without its SDK function) equal to the SDK's own, request for request."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict

from components.preview import mockrun

RECORDER = mockrun.Recorder
WHERE = ("sourcePosition", "stackTrace")
"""The call site's file and line: the two programs differ there and nowhere else."""


def sent(program: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every register, read and invoke request `program` sends, whole, in order; a read as
    `{"read": ...}`, an invoke as `{"invoke": ...}`."""
    seen: list[dict[str, Any]] = []

    def keep(request: Any, kind: str | None) -> None:
        body = MessageToDict(request)
        for key in WHERE:
            body.pop(key, None)
        seen.append({kind: body} if kind else body)

    class Capture(RECORDER):
        def RegisterResource(self, request: Any) -> Any:
            keep(request, None)
            return super().RegisterResource(request)

        def ReadResource(self, request: Any) -> Any:
            keep(request, "read")
            return super().ReadResource(request)

        def Invoke(self, request: Any) -> Any:
            keep(request, "invoke")
            return super().Invoke(request)

    monkeypatch.setattr(mockrun, "Recorder", Capture)
    mockrun.run_program(program)
    return seen


def snake(value: Any, user_maps: tuple[str, ...] = ()) -> Any:
    """`value` with every key snake_case but inside the maps named `user_maps` (label maps, Helm
    values: the user's keys): the Python names an SDK class translates back to camelCase. A
    camelCase key the SDK does not know reaches the engine untranslated, and differs."""
    if isinstance(value, dict):
        return {
            re.sub(r"(?<!^)(?=[A-Z])", "_", k).lower(): v if k in user_maps else snake(v, user_maps)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [snake(v, user_maps) for v in value]
    return value
