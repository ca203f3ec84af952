"""YAML: compose files, Kubernetes manifests, Helm values, CI workflows and conda
``environment.yml``, parsed with PyYAML's composer (nodes carry line and column marks).

One walk over every document checks mapping keys and values by what they say, not by which
kind of file they are in: a Helm values file has no fixed shape, and the same ``image:`` or
``nvidia.com/gpu`` means the same thing in compose and in a manifest.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from typing import Any

from portlint.deploy.commands import (
    AMD64_PLATFORMS,
    check_command,
    check_container_cli,
    check_image_reference,
)
from portlint.deploy.facts import (
    deploy_table,
    device_advice,
    resource_advice,
    variable_advice,
    variable_severity,
)
from portlint.deploy.report import Reporter
from portlint.deploy.requirements import check_conda_spec, check_pip_arguments, split_line
from portlint.deploy.shell import analyse_shell_text
from portlint.deploy.treesitter import region_text
from portlint.deploy.words import Word
from portlint.model import ALL_TARGETS, Advice, Span, Status

ENV_PARENTS = frozenset({"environment", "env", "variables"})
#: Kubernetes ``env:`` is a list of ``{name: ..., value: ...}``.
ENV_LIST = "env"
SHELL_KEYS = frozenset({"run", "script", "before_script", "after_script"})
ARGV_KEYS = frozenset({"command", "entrypoint", "args"})
SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash"})
WORD = re.compile(r"\S+")
#: Used when a Helm template (``{{ ... }}``) is not valid YAML: the resource names still show.
TEMPLATE_RESOURCE = re.compile(r"nvidia\.com/(?:gpu|mig-[\w.-]+)(?![\w.-])")


def analyse_yaml_text(rep: Reporter) -> None:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        documents = list(yaml.compose_all(rep.source.text, Loader=loader))
    except yaml.YAMLError as error:
        if "{{" in rep.source.text:
            scan_template(rep)
            return
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        line, column = (mark.line + 1, mark.column) if mark else (1, 0)
        rep.parse_error(line, column, f"YAML error: {problem}")
        return
    for document in documents:
        if document is not None:
            YamlWalk(rep).visit(document, ())


def scan_template(rep: Reporter) -> None:
    for number, line in enumerate(rep.index.lines, start=1):
        for match in TEMPLATE_RESOURCE.finditer(line):
            span = Span(number, match.start(), number, match.end())
            message = f"`{match.group()}` is advertised by NVIDIA's device plugin only"
            rep.add("PRT911", span, message, resource_advice(rep.catalog))


@functools.cache
def other_vendors(catalog: Any) -> frozenset[str]:
    """The words that name a vendor other than NVIDIA (rules/device.toml ``[backend.vendors]``)."""
    vendors = catalog.table("device").get("backend", {}).get("vendors", {})
    return frozenset(
        word.lower() for vendor, words in vendors.items() if vendor != "cuda" for word in words
    )


def runtime_class_advice(catalog: Any) -> dict[str, Advice]:
    """Other vendors' device plugins need no runtime class: drop it, request their resource."""
    advice = {}
    for target, resource in resource_advice(catalog).items():
        if resource.replacement:
            advice[target] = Advice(Status.MANUAL, f"drop it; request {resource.replacement}")
        else:
            advice[target] = resource
    return advice


def scalar_word(node: Any) -> Word:
    """A scalar's value and the span of its text (quotes excluded)."""
    start, end = node.start_mark, node.end_mark
    span = Span(start.line + 1, start.column, end.line + 1, end.column)
    if node.style in ("'", '"') and span.line == span.end_line:
        span = Span(span.line, span.column + 1, span.end_line, span.end_column - 1)
    return Word(str(node.value), span)


def is_scalar(node: Any) -> bool:
    return node.__class__.__name__ == "ScalarNode"


def is_sequence(node: Any) -> bool:
    return node.__class__.__name__ == "SequenceNode"


def is_mapping(node: Any) -> bool:
    return node.__class__.__name__ == "MappingNode"


def mapping_items(node: Any) -> dict[str, tuple[Any, Any]]:
    return {str(k.value): (k, v) for k, v in node.value if is_scalar(k)}


class YamlWalk:
    def __init__(self, rep: Reporter) -> None:
        self.rep = rep
        self.table = deploy_table(rep.catalog)

    def visit(self, node: Any, path: tuple[str, ...]) -> None:
        if is_mapping(node):
            if not path and "dependencies" in mapping_items(node):
                self.check_conda_environment(mapping_items(node)["dependencies"][1])
            if len(path) == 2 and path[0] == "jobs" and self.on_nvidia_runners(node):
                # the project's NVIDIA CI job: run on NVIDIA alone, by design
                first, last = node.start_mark.line + 1, node.end_mark.line + 1
                self.rep.covered_lines.append((first, last, frozenset(ALL_TARGETS)))
            for key, value in node.value:
                if is_scalar(key):
                    self.check_pair(key, value, path)
                    self.visit(value, (*path, str(key.value)))
        elif is_sequence(node):
            if path and path[-1] == "devices":
                self.check_device_requests(node)
            for item in node.value:
                if is_scalar(item) and path and path[-1] in ENV_PARENTS:
                    self.check_env_item(item)
                self.visit(item, (*path, "-"))
        elif is_scalar(node) and path:
            self.check_value(node, path)

    # -- keys ----------------------------------------------------------------------------------

    def check_pair(self, key: Any, value: Any, path: tuple[str, ...]) -> None:
        name = str(key.value)
        rep = self.rep
        if path and path[-1] in ENV_PARENTS and variable_advice(name, rep.catalog):
            self.report_variable(scalar_word(key))
        if self.is_resource(name):
            message = f"`{name}` is advertised by NVIDIA's device plugin only"
            rep.add("PRT911", scalar_word(key).span, message, resource_advice(rep.catalog))
        elif self.is_label(name):
            message = f"`{name}` is set only on NVIDIA nodes"
            rep.add("PRT912", scalar_word(key).span, message)
        if not is_scalar(value):
            if name in SHELL_KEYS | ARGV_KEYS and is_sequence(value):
                self.check_command_list(name, value)
            return
        text = str(value.value)
        valued = self.table["node_selection"]["valued"]
        if name in valued and text.lower().startswith(valued[name]):
            rep.add("PRT912", scalar_word(value).span, f"`{name}: {text}` selects NVIDIA nodes")
        elif name == "runtime" and text == "nvidia":
            message = "the `nvidia` runtime exists only with the NVIDIA Container Toolkit"
            rep.add(
                "PRT903", scalar_word(value).span, message, device_advice(rep.catalog, "compose")
            )
        elif name == "runtimeClassName" and text == "nvidia":
            message = "the `nvidia` runtime class exists only on nodes set up by NVIDIA's operator"
            rep.add("PRT903", scalar_word(value).span, message, runtime_class_advice(rep.catalog))
        elif name == "gpus":
            message = "`gpus:` needs the NVIDIA Container Toolkit"
            span = Span(*start_of(key), *end_of(value))
            rep.add("PRT904", span, message, device_advice(rep.catalog, "compose"))
        elif name == "image":
            check_image_reference(rep, scalar_word(value))
        elif name == "platform" and text in AMD64_PLATFORMS:
            rep.add("PRT902", scalar_word(value).span, f"`{text}` pins the container to x86_64")
        elif name in SHELL_KEYS or name in ARGV_KEYS:
            self.check_shell_scalar(value)
        elif name == "options" and path[-1:] == ("container",):  # GitHub job container
            word = scalar_word(value)
            words = [Word(m.group(), word.part(m.start(), m.end())) for m in WORD.finditer(text)]
            check_container_cli(rep, words)

    def on_nvidia_runners(self, job: Any) -> bool:
        """Whether a GitHub Actions job's ``runs-on`` labels pin it to NVIDIA machines
        (rules/deploy.toml ``[ci_runners]``)."""
        runs_on = mapping_items(job).get("runs-on")
        if runs_on is None:
            return False
        labels = runs_on[1].value if is_sequence(runs_on[1]) else [runs_on[1]]
        words = {
            word
            for label in labels
            if is_scalar(label)
            for word in re.split(r"[^a-z0-9]+", str(label.value).lower())
        }
        return bool(words & set(self.table["ci_runners"]["nvidia"])) and not words & other_vendors(
            self.rep.catalog
        )

    def is_resource(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.table["resource"]["nvidia"])

    def is_label(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.table["node_selection"]["labels"])

    # -- values ----------------------------------------------------------------------------------

    def check_value(self, node: Any, path: tuple[str, ...]) -> None:
        """A scalar value that names an NVIDIA resource, label or taint (Helm values,
        tolerations, node affinity expressions)."""
        text, key = str(node.value), path[-1]
        if key == "key" and text in self.table["node_selection"]["taints"]:
            self.rep.add("PRT912", scalar_word(node).span, f"`{text}` tolerates NVIDIA nodes only")
        elif self.is_resource(text):
            message = f"`{text}` is advertised by NVIDIA's device plugin only"
            self.rep.add(
                "PRT911", scalar_word(node).span, message, resource_advice(self.rep.catalog)
            )
        elif self.is_label(text):
            self.rep.add("PRT912", scalar_word(node).span, f"`{text}` is set only on NVIDIA nodes")
        elif (
            key == "name" and path[-3:-2] == (ENV_LIST,) and variable_advice(text, self.rep.catalog)
        ):
            self.report_variable(scalar_word(node))

    def check_env_item(self, node: Any) -> None:
        """A ``NAME=value`` item of a compose ``environment:`` list."""
        word = scalar_word(node)
        name = word.text.split("=", 1)[0]
        if variable_advice(name, self.rep.catalog):
            self.report_variable(Word(name, word.part(0, len(name))))

    def report_variable(self, name: Word) -> None:
        message = f"`{name.text}` is read only by NVIDIA's stack"
        catalog = self.rep.catalog
        advice = variable_advice(name.text, catalog) or {}
        severity = variable_severity(name.text, catalog)
        self.rep.add("PRT921", name.span, message, advice, severity=severity)

    def check_device_requests(self, node: Any) -> None:
        """compose ``deploy.resources.reservations.devices`` and CDI ``devices:`` entries."""
        advice = device_advice(self.rep.catalog, "compose")
        for item in node.value:
            if is_scalar(item) and str(item.value).startswith("nvidia.com/gpu"):
                self.rep.add("PRT904", scalar_word(item).span, "NVIDIA CDI device", advice)
            if not is_mapping(item):
                continue
            fields = mapping_items(item)
            driver = fields.get("driver", (None, None))[1]
            capabilities = fields.get("capabilities", (None, None))[1]
            if driver is not None and is_scalar(driver) and driver.value == "nvidia":
                message = "`driver: nvidia` reserves NVIDIA GPUs only"
                self.rep.add("PRT904", scalar_word(driver).span, message, advice)
            elif driver is None and capabilities is not None and is_sequence(capabilities):
                for capability in capabilities.value:
                    if is_scalar(capability) and capability.value == "gpu":
                        message = "`capabilities: [gpu]` is served by the NVIDIA Container Toolkit"
                        self.rep.add("PRT904", scalar_word(capability).span, message, advice)

    # -- commands --------------------------------------------------------------------------------

    def check_shell_scalar(self, node: Any) -> None:
        start, end = node.start_mark, node.end_mark
        if node.style in ("|", ">"):
            last = end.line if end.column == 0 else end.line + 1
            first = start.line + 2
            if last < first:
                return
            span = Span(first, 0, last, len(self.rep.index.line(last)))
        else:
            span = scalar_word(node).span
        analyse_shell_text(self.rep, region_text(self.rep.index, span), span.line)

    def check_command_list(self, name: str, node: Any) -> None:
        items = [item for item in node.value if is_scalar(item)]
        if name in SHELL_KEYS:  # GitLab: one shell line per item
            for item in items:
                self.check_shell_scalar(item)
            return
        words = [scalar_word(item) for item in items]
        texts = [w.text for w in words]
        if len(words) >= 3 and texts[0] in SHELLS and texts[1] == "-c":
            self.check_shell_scalar(items[2])
        else:
            check_command(self.rep, words)

    # -- conda -----------------------------------------------------------------------------------

    def check_conda_environment(self, node: Any) -> None:
        if not is_sequence(node):
            return
        for item in node.value:
            if is_scalar(item):
                check_conda_spec(self.rep, scalar_word(item))
            elif is_mapping(item) and "pip" in mapping_items(item):
                pip = mapping_items(item)["pip"][1]
                for line in pip.value if is_sequence(pip) else []:
                    if is_scalar(line):
                        self.check_pip_line(line)

    def check_pip_line(self, node: Any) -> None:
        word = scalar_word(node)
        if word.span.line != word.span.end_line:
            return
        padded = " " * word.span.column + word.text
        check_pip_arguments(self.rep, split_line(padded, word.span.line))


def start_of(node: Any) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column


def end_of(node: Any) -> tuple[int, int]:
    return node.end_mark.line + 1, node.end_mark.column
