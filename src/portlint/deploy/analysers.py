"""The engine's entry point for build and deployment files: one cheap prefilter for all of them,
and one ``analyse_*`` per file kind that imports its parser only when called. Each is called as
every analyser is (``portlint.sink``): ``analyse(source, catalog, settings, sink)``."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from portlint.catalog import Catalog
from portlint.model import SourceFile

if TYPE_CHECKING:
    from portlint.config import Settings
    from portlint.sink import FindingSink

Analyse = Callable[[SourceFile, Catalog, "Settings | None", "FindingSink"], None]

#: Text at least one of which a deployment file must contain for any PRT9xx rule to fire.
CANDIDATE = re.compile(
    r"nvidia|cuda|nvcc|nvml|cupy|flash.attn|xformers|apex|bitsandbytes|tensorrt|"
    r"onnxruntime-gpu|--gpus|gpus:|sm_\d|x86_64|amd64|gencode|l4t|\+cu\d",
    re.IGNORECASE,
)


def is_candidate(text: str) -> bool:
    return CANDIDATE.search(text) is not None


def is_setup_py_candidate(text: str) -> bool:
    from portlint.python.prefilter import is_candidate as is_python_candidate

    return is_python_candidate(text) or is_candidate(text)


def _reporting(module: str, check: str) -> Analyse:
    """An analyser that runs ``portlint.deploy.<module>.<check>(reporter)``, importing the
    module (and its parser) on the first file."""

    def analyse(
        source: SourceFile, catalog: Catalog, settings: Settings | None, sink: FindingSink
    ) -> None:
        from portlint.deploy.report import Reporter

        run = getattr(importlib.import_module(f"portlint.deploy.{module}"), check)
        run(Reporter.for_source(source, catalog, sink))

    return analyse


analyse_dockerfile = _reporting("dockerfile", "analyse_dockerfile_text")
analyse_yaml = _reporting("yamlfiles", "analyse_yaml_text")
analyse_shell = _reporting("shell", "analyse_shell_file")
analyse_requirements = _reporting("requirements", "analyse_requirements_text")
analyse_pyproject = _reporting("manifests", "analyse_pyproject_text")
analyse_setup_cfg = _reporting("manifests", "analyse_setup_cfg_text")
analyse_cmake = _reporting("cmake", "analyse_cmake_text")


def analyse_setup_py(
    source: SourceFile, catalog: Catalog, settings: Settings | None, sink: FindingSink
) -> None:
    from portlint.deploy.setup_py import analyse_setup_py as analyse

    analyse(source, catalog, settings, sink)
