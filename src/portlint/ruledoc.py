"""Rule documentation, as ``portlint rule CODE`` prints it (the shape of ``ruff rule``)."""

from __future__ import annotations

import json

from portlint.catalog import Catalog, Rule
from portlint.model import ALL_TARGETS, TARGETS
from portlint.output.report import advice_text

#: The language a Markdown fence names for a rule's example, by the example's file ending
#: (``example_suffix``); an ending not listed gets a plain fence.
FENCE_LANGUAGES = {
    ".py": "python",
    ".cu": "cuda",
    ".cpp": "cpp",
    ".sh": "bash",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".Dockerfile": "dockerfile",
    "-requirements.txt": "text",
    ".cmake": "cmake",
}

FIX_WORDS = {
    "none": "Fix is not available.",
    "safe": "Fix is always available (safe).",
    "unsafe": "Fix is available with --unsafe-fixes.",
    "sometimes": "Fix is sometimes available.",
}


def rule_page(rule: Rule, catalog: Catalog, output_format: str = "text") -> str:
    if output_format == "json":
        return json.dumps(rule_json(rule), indent=2) + "\n"
    parts = [
        f"# {rule.name} ({rule.code})",
        "",
        f"Severity: {rule.severity.value}. {FIX_WORDS[rule.fix]}",
        "",
        "## What it does",
        rule.what,
        "",
        "## Why is this bad?",
        rule.why,
    ]
    if rule.targets:
        parts += ["", "## Per target", ""]
        shown = [t for t in ALL_TARGETS if t in TARGETS or t in rule.targets]
        parts += [f"- {t}: {advice_text(rule.targets.get(t))}" for t in shown]
    fence = "```" + FENCE_LANGUAGES.get(rule.example_suffix, "")
    if rule.example:
        parts += ["", "## Example", fence, rule.example, "```"]
    if rule.use_instead:
        parts += ["", "## Use instead", fence, rule.use_instead, "```"]
    parts += ["", "## Fix safety", rule.fix_safety, ""]
    return "\n".join(parts)


def rule_json(rule: Rule) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "summary": rule.summary,
        "fix": rule.fix,
        "what": rule.what,
        "why": rule.why,
        "example": rule.example,
        "use_instead": rule.use_instead,
        "fix_safety": rule.fix_safety,
    }


def rule_list(catalog: Catalog, output_format: str = "text") -> str:
    rules = sorted(catalog.rules.values(), key=lambda r: r.code)
    if output_format == "json":
        return json.dumps([rule_json(r) for r in rules], indent=2) + "\n"
    width = max(len(r.name) for r in rules)
    lines = [f"{'code':<7} {'name':<{width}}  fix        summary"]
    for rule in rules:
        lines.append(f"{rule.code:<7} {rule.name:<{width}}  {rule.fix:<9}  {rule.summary}")
    return "\n".join(lines) + "\n"
