"""The mock runtime leaves no event loop open: an unclosed one is closed by its `__del__` at exit,
after its file descriptors are gone, and prints "Exception ignored in BaseEventLoop.__del__ ...
Invalid file descriptor: -1" to stderr (about one preview in five, exit code still 0)."""

import asyncio

from components.pools.existing import ExistingGpuNodes, ExistingGpuNodesArgs
from components.preview.mockrun import run_program


def test_every_event_loop_the_run_makes_is_closed(monkeypatch):
    made: list[asyncio.AbstractEventLoop] = []
    real = asyncio.new_event_loop

    def tracked() -> asyncio.AbstractEventLoop:
        loop = real()
        made.append(loop)
        return loop

    monkeypatch.setattr(asyncio, "new_event_loop", tracked)
    # Registrations and a read: the SDK calls the mock monitor from its executor's threads.
    run_program(
        lambda: ExistingGpuNodes("gpu", ExistingGpuNodesArgs(nodes=["n1", "n2"], gpus_per_node=1))
    )
    assert len(made) >= 2  # the program's loop and at least one worker thread's
    assert [loop for loop in made if not loop.is_closed()] == []
