"""Runs inside a grading kernel: keeps a student's exercise cell from changing what the rest of the lesson uses.

The grader wraps each exercise like this::

    _guard_<random> = Guard(globals(), exports)     # before the student's cell: a snapshot
    <the student's solution cell>
    _guard_<random>.after_solution()                # names the cell rebound are put back
    <the instructor's visible check>  <the instructor's hidden tests>
    _guard_<random>.after_check(check_names)        # anything the tests rely on that changed meanwhile fails it

A student's cell may define the exercise's names (``exports``) and new names of its own. Rebinding anything that
existed before it — a global such as ``model`` or ``self_attention``, or a function or class in a module the
notebook imported, such as ``torch.allclose`` or ``builtins.all`` — is undone; if it happens while the checks run
(from inside the student's function), the exercise fails. Each report is one printed line the grader reads.
"""

from __future__ import annotations

import builtins
import json
import types
from typing import Any

MARKER = "@@course-grading@@"
_IGNORED = {"In", "Out", "exit", "quit", "get_ipython"}
# The kernel installs these anew for each cell it runs; and the sys module is the kernel's own business.
_SWAPPED_PER_CELL = {("builtins", "input"), ("getpass", "getpass"), ("sys", "excepthook"), ("sys", "displayhook")}
_UNWATCHED_MODULES = {"sys"}


def _watched(value: Any) -> bool:
    return callable(value) or isinstance(value, types.ModuleType)


class Guard:
    """A snapshot of the notebook's globals and of the functions and classes of the modules it imported."""

    def __init__(self, namespace: dict[str, Any], exports: list[str]) -> None:
        self.namespace = namespace
        self.exports = set(exports)
        self.globals = {k: v for k, v in namespace.items() if not k.startswith("_") and k not in _IGNORED}
        modules = {
            id(m): m
            for m in namespace.values()
            if isinstance(m, types.ModuleType) and m.__name__ not in _UNWATCHED_MODULES
        }
        modules[id(builtins)] = builtins
        self.modules = {
            key: (
                module,
                {
                    k: v
                    for k, v in vars(module).items()
                    if _watched(v) and (module.__name__, k) not in _SWAPPED_PER_CELL
                },
            )
            for key, module in modules.items()
        }

    def _changes(self, allowed: set[str], theirs: dict[str, Any] | None = None) -> list[str]:
        """Put back every rebound or deleted name not in ``allowed``; returns what was changed, e.g.
        ``torch.allclose``. ``theirs`` receives the globals' values as the student's cell left them."""
        changed = []
        for name, value in self.globals.items():
            if name in allowed:
                continue
            if name not in self.namespace or self.namespace[name] is not value:
                if theirs is not None and name in self.namespace:
                    theirs[name] = self.namespace[name]
                self.namespace[name] = value
                changed.append(name)
        for module, attributes in self.modules.values():
            current = vars(module)
            for name, value in attributes.items():
                if current.get(name, _MISSING) is not value:
                    try:
                        setattr(module, name, value)
                    except (AttributeError, TypeError):
                        continue
                    changed.append(f"{module.__name__}.{name}")
        return changed

    def after_solution(self) -> None:
        """After the student's cell: undo rebindings of names the exercise does not define. If the exercise's
        functions read a name the cell rebound (a helper ``words`` where the lesson has a list ``words``, and helpers
        calling helpers), they and the cell's own functions become copies sharing one namespace: the notebook's,
        with those names as the student left them."""
        theirs: dict[str, Any] = {}
        restored = self._changes(self.exports, theirs)
        mine = {
            name: f
            for name, f in [*((n, self.namespace.get(n)) for n in self.exports), *theirs.items()]
            if isinstance(f, types.FunctionType) and f.__globals__ is self.namespace
        }
        if any(_global_names(f.__code__) & set(theirs) for f in mine.values()):
            own = dict(self.namespace)
            own.update(theirs)
            for name, function in mine.items():
                copy = types.FunctionType(
                    function.__code__, own, function.__name__, function.__defaults__, function.__closure__
                )
                copy.__kwdefaults__, copy.__dict__ = function.__kwdefaults__, dict(function.__dict__)
                copy.__doc__, copy.__annotations__ = function.__doc__, function.__annotations__
                own[name] = copy
                if name in self.exports:
                    self.namespace[name] = copy
        _report({"restored": restored})

    def after_check(self, check_names: list[str]) -> None:
        """After the checks: anything changed while they ran (beyond what they assign themselves) fails the exercise."""
        _report({"tampered": self._changes(self.exports | set(check_names))})


_MISSING = object()


def _global_names(code: types.CodeType) -> set[str]:
    """The global names a function's code (and the code nested in it) may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _report(payload: dict[str, Any]) -> None:
    print(MARKER + json.dumps(payload))
