"""The engine's entry point for build and deployment files: one cheap prefilter for all of them,
and one ``analyse_*`` per file kind that imports its parser only when called."""

from __future__ import annotations

import re

from portlint.catalog import Catalog
from portlint.model import Finding, SourceFile

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


def _run(source: SourceFile, catalog: Catalog, analyse) -> list[Finding]:
    from portlint.deploy.report import Reporter

    rep = Reporter.for_source(source, catalog)
    analyse(rep)
    return rep.findings


def analyse_dockerfile(source: SourceFile, catalog: Catalog) -> list[Finding]:
    from portlint.deploy.dockerfile import analyse_dockerfile_text

    return _run(source, catalog, analyse_dockerfile_text)


def analyse_yaml(source: SourceFile, catalog: Catalog) -> list[Finding]:
    from portlint.deploy.yamlfiles import analyse_yaml_text

    return _run(source, catalog, analyse_yaml_text)


def analyse_shell(source: SourceFile, catalog: Catalog) -> list[Finding]:
    from portlint.deploy.shell import analyse_shell_text

    return _run(source, catalog, lambda rep: analyse_shell_text(rep, source.text))


def analyse_requirements(source: SourceFile, catalog: Catalog) -> list[Finding]:
    from portlint.deploy.requirements import analyse_requirements_text

    return _run(source, catalog, lambda rep: analyse_requirements_text(source, rep))


def analyse_pyproject(source: SourceFile, catalog: Catalog) -> list[Finding]:
    from portlint.deploy.manifests import analyse_pyproject_text

    return _run(source, catalog, analyse_pyproject_text)


def analyse_setup_cfg(source: SourceFile, catalog: Catalog) -> list[Finding]:
    from portlint.deploy.manifests import analyse_setup_cfg_text

    return _run(source, catalog, analyse_setup_cfg_text)


def analyse_cmake(source: SourceFile, catalog: Catalog) -> list[Finding]:
    from portlint.deploy.cmake import analyse_cmake_text

    return _run(source, catalog, analyse_cmake_text)


def analyse_setup_py(source: SourceFile, catalog: Catalog, settings=None) -> list[Finding]:
    from portlint.deploy.setup_py import analyse_setup_py as analyse

    return analyse(source, catalog, settings)
