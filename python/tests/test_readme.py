"""The README's Python example runs as shown (from the repository root)."""

from __future__ import annotations

import os
import re

from conftest import REPO


def test_the_readme_example_runs() -> None:
    readme = (REPO / "README.md").read_text()
    section = readme.split("\n## From Python\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert blocks, "no python block in the README's From Python section"
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        for code in blocks:
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
