"""Every Python example of the README and the docs pages runs as written under Pulumi mocks, and
imports the library by its public name, `gpu_inference`."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCKS = [
    pytest.param(
        m.group(1),
        id=f"{page.relative_to(ROOT)}:{page.read_text()[: m.start()].count(chr(10)) + 1}",
    )
    for page in PAGES
    for m in re.finditer(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)
]


def test_the_docs_have_python_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("code", BLOCKS)
def test_a_python_example_runs_and_imports_the_public_name(run, code):
    imports = re.findall(r"^(?:from|import) ([\w.]+)", code, re.M)
    assert [m for m in imports if m.split(".")[0] == "components"] == []
    assert "gpu_inference" in imports
    graph = run(lambda: exec(code, {}))
    assert graph.resources
