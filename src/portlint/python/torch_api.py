"""Per-target answers for ``torch.cuda.*`` names, from the policy table and the generated facts.

Policy (``rules/torch_api.toml`` ``[api.NAME]``): the device-generic form and the torch version
that has it, the CPU answer, overrides. Facts (``rules/generated/torch_modules.toml``): which
names ``torch.npu``, ``torch.mlu``, ``torch.xpu`` and ``torch.mps`` really export.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass, replace
from typing import Any

from portlint.catalog import Catalog
from portlint.config import version_tuple
from portlint.model import PORTABLE, Advice, Severity, Status

VENDOR_MODULES = ("npu", "mlu", "xpu", "mps")
#: torch.cuda sub-modules whose names are re-exported by torch.cuda itself.
FLAT_SUBMODULES = ("memory.", "random.", "streams.", "graphs.", "gds.")
#: torch.cuda.amp modules whose names torch.cuda.amp re-exports (``amp.grad_scaler.GradScaler``
#: is ``amp.GradScaler``).
AMP_SUBMODULES = ("amp.grad_scaler.", "amp.autocast_mode.")
#: Severity by what a name does without CUDA: raising is an error, also under a rule whose own
#: severity is lower (PRT602's capability questions); "unknown" keeps the rule's.
OUTCOME_SEVERITY = {"raises": "error", "warns": "warning", "noop": "info", "value": "info"}


@dataclass(frozen=True)
class ApiEntry:
    name: str
    rule: str
    targets: dict[str, Advice]
    generic: str | None
    since: str | None
    #: The keyword the generic form needs the device under (``device_type`` for autocast).
    generic_args: str | None
    unsafe: bool
    severity: Severity | None
    #: The vendor modules (npu, mlu, xpu, mps) that have a function or class of this name.
    vendors: tuple[str, ...] = ()
    #: A CPU-only machine does not need the call (``cpu = "remove"``) ...
    cpu_remove: bool = False
    #: ... or reads this value instead (``cpu_value``, e.g. 0 for memory counters).
    cpu_value: str | None = None
    #: What the name does without CUDA, measured (generated/torch_cuda_behaviour.toml): raises,
    #: warns, noop, value, module, same (the generic form's very object) or unknown.
    outcome: str = "unknown"
    #: The value it returns without CUDA (outcome "value").
    value: str | None = None
    #: A private name reported all the same (``private = true`` in rules/torch_api.toml).
    private: bool = False
    #: An exception class, which every build has (measured: ``torch.cuda.CudaError``).
    exception: bool = False

    def behaviour_text(self) -> str:
        """A few words on what happens without CUDA, for the finding's message."""
        if self.outcome == "noop":
            return "without CUDA it does nothing"
        if self.outcome == "warns":
            return "without CUDA it warns and disables itself"
        if self.outcome == "value" and self.value in ("<partial>", "<function>"):
            return "without CUDA it still decorates, and no CUDA autocast is there to follow"
        if self.outcome == "value" and self.value is not None:
            return f"without CUDA it returns {self.value}"
        return ""

    def without_generic(self) -> ApiEntry:
        """This entry for code that runs on a torch older than the generic form: no rename to
        it, no fix."""
        targets = {
            target: Advice(Status.UNSUPPORTED, None, f"torch.{target} has no {self.name}")
            if advice.replacement == self.generic
            else advice
            for target, advice in self.targets.items()
        }
        return replace(self, targets=targets, generic=None, since=None, vendors=())

    def generic_text(self) -> str:
        if not self.generic:
            return ""
        if self.since and version_tuple(self.since) >= (2, 0):  # older ones go without saying
            return f"{self.generic} (torch >= {self.since})"
        return self.generic


class TorchCudaApi:
    def __init__(self, catalog: Catalog) -> None:
        self.policy: dict[str, dict[str, Any]] = catalog.table("torch_api").get("api", {})
        facts = catalog.data("generated/torch_modules.toml")["modules"]
        self.cuda_names = frozenset(facts["torch.cuda"]["names"])
        self.vendor_names = {t: frozenset(facts[f"torch.{t}"]["names"]) for t in VENDOR_MODULES}
        measured = catalog.data("generated/torch_cuda_behaviour.toml")
        self.behaviour: dict[str, dict[str, str]] = measured["behaviour"]
        #: The ``torch.nn`` classes that hold no tensor built without arguments (measured).
        self.stateless_modules = frozenset(measured.get("stateless", {}).get("names", ()))

    def normalise(self, name: str) -> str:
        """``memory.empty_cache`` -> ``empty_cache``: sub-module paths re-exported by torch.cuda."""
        for prefix in FLAT_SUBMODULES:
            if name.startswith(prefix) and name[len(prefix) :] in self.policy:
                return name[len(prefix) :]
        for prefix in AMP_SUBMODULES:
            if name.startswith(prefix) and "amp." + name[len(prefix) :] in self.policy:
                return "amp." + name[len(prefix) :]
        return name

    @functools.cache  # noqa: B019 - one instance per catalogue
    def entry(self, name: str) -> ApiEntry:
        name = self.normalise(name)
        policy = self.policy.get(name, {})
        generic = policy.get("generic")
        rocm_note = policy.get("rocm_manual")
        targets = {"rocm": Advice(Status.MANUAL, None, rocm_note) if rocm_note else PORTABLE}
        for target in VENDOR_MODULES:
            targets[target] = self._vendor_advice(target, name, policy, generic)
        behaviour = self.behaviour.get(name, {})
        outcome = behaviour.get("outcome", "unknown")
        targets["cpu"] = _cpu_advice(policy.get("cpu"), policy.get("cpu_value"))
        if policy.get("cpu") == "remove" and outcome == "noop":
            # ``torch.cuda.empty_cache()``: measured a no-op on a CPU-only build, so a CPU-only
            # machine has nothing to remove and loses nothing (the fix still guards the generic
            # form there, ``cpu_remove``)
            targets["cpu"] = PORTABLE
        if policy.get("private"):  # no public name to map it to
            note = "private API: no public form"
            targets = {"rocm": targets["rocm"]}
            targets |= {t: Advice(Status.MANUAL, None, note) for t in (*VENDOR_MODULES, "cpu")}
        severity = policy.get("severity")
        if not severity:  # measured: raising is an error, disabling itself a warning, else info
            severity = OUTCOME_SEVERITY.get(outcome)
        return ApiEntry(
            name=name,
            rule=policy.get("rule", "PRT201"),
            targets=targets,
            generic=generic,
            since=policy.get("since"),
            generic_args=policy.get("generic_args"),
            unsafe=bool(policy.get("unsafe", False)),
            severity=Severity(severity) if severity else None,
            vendors=tuple(t for t in VENDOR_MODULES if name in self.vendor_names[t]),
            cpu_remove=policy.get("cpu") == "remove",
            cpu_value=policy.get("cpu_value"),
            outcome=outcome,
            value=behaviour.get("value"),
            private=bool(policy.get("private", False)),
            exception=behaviour.get("exception") == "true",
        )

    def _vendor_advice(
        self, target: str, name: str, policy: dict[str, Any], generic: str | None
    ) -> Advice:
        if target in policy:
            replacement = policy[target]
            if replacement == "":
                return Advice(Status.UNSUPPORTED)
            return Advice(Status.RENAME, replacement)
        if name in self.vendor_names[target]:
            return Advice(Status.RENAME, f"torch.{target}.{name}")
        if generic:
            since = policy.get("since")
            return Advice(
                Status.RENAME, generic, f"torch.{target} has no {name}; needs torch >= {since}"
            )
        return Advice(Status.UNSUPPORTED, None, f"torch.{target} has no {name}")


def _cpu_advice(answer: str | None, value: str | None = None) -> Advice:
    if value is not None:
        return Advice(Status.MANUAL, None, f"reads {value} on CPU")
    if answer == "ok":
        return PORTABLE
    if answer == "remove":
        return Advice(Status.MANUAL, None, "not needed on CPU: remove")
    if answer:
        return Advice(Status.RENAME, answer)
    return Advice(Status.UNSUPPORTED)


@functools.cache
def torch_cuda_api(catalog: Catalog) -> TorchCudaApi:
    return TorchCudaApi(catalog)


def disables_autocast(call: ast.Call, enabled_position: int) -> bool:
    """``torch.autocast("cuda", enabled=False)``, ``torch.cuda.amp.autocast(False)``: the call
    only switches off an autocast around it. Without CUDA there is no CUDA autocast to switch
    off: it does nothing (and another device's autocast stays on, a merely different value)."""
    given = [kw.value for kw in call.keywords if kw.arg == "enabled"]
    if len(call.args) > enabled_position:
        given.append(call.args[enabled_position])
    return any(isinstance(value, ast.Constant) and value.value is False for value in given)


#: What the finding says of an autocast that only switches autocast off.
DISABLES_AUTOCAST = "it only switches a CUDA autocast off: without CUDA it does nothing"
