"""Only what pyproject.toml cannot say: a built wheel carries the page (``static/``, ``templates/``) inside the
``flowgrad`` package (``flowgrad/_page/``), so ``pip install .`` gives the notebook widget everything it draws
with. An editable install reads them from the checkout instead (``flowgrad/page.py``)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
PAGE_DIRS = ("static", "templates")


class BuildPyWithPage(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):  # the checkout's own files are used in place
            return
        for name in PAGE_DIRS:
            target = Path(self.build_lib) / "flowgrad" / "_page" / name
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(ROOT / name, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithPage})
