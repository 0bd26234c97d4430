"""Runs inside a grading kernel: keeps a student's exercise cell from changing what the rest of the lesson uses.

The grader wraps each exercise like this::

    _guard_<random> = Guard(globals(), exports)     # before the student's cell: a snapshot
    <the student's solution cell>
    _guard_<random>.after_solution()                # names the cell rebound are put back
    <the instructor's visible check>  <the instructor's hidden tests>
    _guard_<random>.after_check(check_names)        # anything the tests rely on that changed meanwhile fails it

A student's cell may define the exercise's names (``exports``) and new names of its own. Rebinding anything that
existed before it — a global such as ``model`` or ``self_attention``, or a function or class in a module the notebook
imported, such as ``torch.allclose`` or ``builtins.all`` — is undone; if it happens while the checks run (from inside
the student's function), the exercise fails. Changing the lesson's data in place is undone too: the contents of its
dicts, lists and sets (nested ones included), tensors, NumPy arrays and pandas tables, such as
``results["pretrained"] = 0.99`` or ``labels[labels == -100] = 0``, are put back after the student's cell, every alias
sees the original again, and the exercise fails (its answer changed data the rest of the lesson reads; new keys or
items added after the old ones only earn a note, as from a call to 03a's ``hand_run`` under a name of the student's
own). Models and other objects are compared by identity only (an exercise may train one); past a size cap
(``_COPY_BYTES``, ``_NODES``) a container's items are compared by identity and an array not at all.

The names the lesson's checks assign (``protected``) are the checks' own, leading "_" or not: a hidden test may keep
what it measured in a global such as ``_references`` for the next answer the wrong-answers tool scores, so a
student's cell (for any exercise) that creates one has it taken away again, and one that changes one has it put
back. What no guard in the kernel's own process can stop is code written against the hidden tests themselves that
runs inside a check (a model's ``forward``, a function the check calls); so a hidden test reads what it keeps first.
Each report is one printed line the grader reads.
"""

from __future__ import annotations

import builtins
import json
import math
import re
import sys
import types
from typing import Any

MARKER = "@@course-grading@@"
_IGNORED = {"In", "Out", "exit", "quit", "get_ipython"}
_IPYTHON_HISTORY = re.compile(r"_{1,3}|_i{1,3}|_i?\d+|_[oid]h")  # IPython rebinds these after every cell
# The kernel installs these anew for each cell it runs; and the sys module is the kernel's own business.
_SWAPPED_PER_CELL = {("builtins", "input"), ("getpass", "getpass"), ("sys", "excepthook"), ("sys", "displayhook")}
_UNWATCHED_MODULES = {"sys"}


def _watched(value: Any) -> bool:
    return callable(value) or isinstance(value, types.ModuleType)


class Guard:
    """A snapshot of the notebook's globals and of the functions and classes of the modules it imported."""

    def __init__(self, namespace: dict[str, Any], exports: list[str], protected: list[str] = ()) -> None:
        self.namespace = namespace
        self.exports = set(exports)
        # the checks' own names (a hidden test's kept reference, ``_references``): watched even with a leading "_",
        # and one a student's cell creates is taken away again, so no answer can plant what a check will read
        self.protected = {n for n in protected if not _IPYTHON_HISTORY.fullmatch(n)} - self.exports - _IGNORED
        self.globals = {
            k: v for k, v in namespace.items() if (not k.startswith("_") or k in self.protected) and k not in _IGNORED
        }
        self.absent = {name for name in self.protected if name not in namespace}
        modules = {
            id(m): m
            for m in namespace.values()
            if isinstance(m, types.ModuleType) and m.__name__ not in _UNWATCHED_MODULES
        }
        total = [_TOTAL_BYTES]
        self.contents = {name: _snapshot(value, _Budget(total)) for name, value in self.globals.items()}
        self.changed_in_place: list[str] = []
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
            rebound = name not in self.namespace or self.namespace[name] is not value
            if rebound:
                if theirs is not None and name in self.namespace:
                    theirs[name] = self.namespace[name]
                self.namespace[name] = value
                changed.append(name)
            # the same object, changed inside: put back; an answer that changed the lesson's data fails its exercise
            change = _change(self.contents[name]) if theirs is not None and name in self.contents else NONE
            if change:
                self.namespace[name] = _restore(self.contents[name])
                if change == CHANGED:
                    self.changed_in_place.append(name)
                if not rebound:
                    changed.append(f"{name} ({'in place' if change == CHANGED else 'added to'})")
        for name in sorted(self.absent - allowed):  # a check's name that did not exist: it must not exist now
            if name in self.namespace:
                if theirs is not None:
                    theirs[name] = self.namespace[name]
                del self.namespace[name]
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
        self.contents = {}  # the copies are no longer needed: free their memory for the rest of the lesson
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
        _report({"restored": restored, "changed_in_place": self.changed_in_place})

    def after_check(self, check_names: list[str]) -> None:
        """After the checks: anything changed while they ran (beyond what they assign themselves) fails the exercise."""
        _report({"tampered": self._changes(self.exports | set(check_names))})


_MISSING = object()

# What a snapshot copies: per global at most _COPY_BYTES of array data and _NODES containers and items, and
# _TOTAL_BYTES for all globals together; past that, a container's items are compared by identity alone (a list of
# 67,000 encoded sentences: which dicts it holds, not what they hold), and a tensor, array or table not at all. The
# copies are dropped once the student's cell has been checked against them (the grading kernel's memory limit is the
# lesson's too).
_COPY_BYTES = 64 * 2**20
_TOTAL_BYTES = 512 * 2**20
_NODES = 20_000
_SHALLOW = 1_000_000  # a longer container is compared by identity alone
_SCALARS = (int, float, complex, str, bytes, bool, type(None))


class _Budget:
    def __init__(self, total: list[int]) -> None:
        self.bytes, self.nodes, self.total = _COPY_BYTES, _NODES, total

    def spend(self, nbytes: int = 0, nodes: int = 1) -> bool:
        if self.nodes < nodes or self.bytes < nbytes or self.total[0] < nbytes:
            return False
        self.nodes, self.bytes, self.total[0] = self.nodes - nodes, self.bytes - nbytes, self.total[0] - nbytes
        return True


def _array_kind(value: Any) -> str | None:
    """'tensor', 'array' or 'table' for the data types the guard copies; looked up only where the lesson imported
    them (this file imports neither torch nor NumPy nor pandas)."""
    torch, numpy, pandas = (sys.modules.get(m) for m in ("torch", "numpy", "pandas"))
    if torch is not None and isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter):
        return "tensor"
    if numpy is not None and isinstance(value, numpy.ndarray):
        return "array"
    if pandas is not None and isinstance(value, (pandas.DataFrame, pandas.Series)):
        return "table"
    return None


def _snapshot(value: Any, budget: _Budget) -> tuple:
    """(kind, the object, what to restore it to): containers hold their items' snapshots; data its copy; anything
    else, or anything past the budget, only the object (compared by identity)."""
    if isinstance(value, _SCALARS):
        return ("ref", value, None)
    kind = _array_kind(value)
    try:
        if (
            kind == "tensor"
            and value.layout == sys.modules["torch"].strided
            and budget.spend(value.numel() * value.element_size())
        ):
            return ("tensor", value, value.detach().clone())
        if kind == "array" and value.dtype != object and budget.spend(value.nbytes):
            return ("array", value, value.copy())
        if kind == "table" and budget.spend(int(sys.modules["numpy"].sum(value.memory_usage(deep=False)))):
            return ("table", value, value.copy(deep=True))
    except Exception:  # an exotic subclass: identity only
        return ("ref", value, None)
    if type(value) in (dict, list, set) and len(value) <= _SHALLOW:
        # within the budget its items are snapshotted too; past it, only which objects it holds
        item = (lambda v: _snapshot(v, budget)) if budget.spend(nodes=1 + len(value)) else (lambda v: ("ref", v, None))
        if type(value) is dict:
            return ("dict", value, [(k, item(v)) for k, v in list(value.items())])
        if type(value) is list:
            return ("list", value, [item(v) for v in value])
        return ("set", value, set(value))
    return ("ref", value, None)


def _same(a: Any, b: Any) -> bool:
    """Equal values (NaN equals NaN), for tensors, arrays and tables element by element."""
    kind = _array_kind(a)
    if kind is None or kind != _array_kind(b):
        if isinstance(a, float) and isinstance(b, float):
            return a == b or (math.isnan(a) and math.isnan(b))
        return a is b or (type(a) is type(b) and isinstance(a, _SCALARS) and a == b)
    if kind == "tensor":
        torch = sys.modules["torch"]
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
            return False
        return bool(
            torch.equal(a, b)
            or (
                a.is_floating_point()
                and torch.equal(a.isnan(), b.isnan())
                and torch.equal(a.nan_to_num(0.0), b.nan_to_num(0.0))
            )
        )
    if kind == "array":
        numpy = sys.modules["numpy"]
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(numpy.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    try:
        return bool(a.equals(b)) and list(a.axes[0]) == list(b.axes[0])
    except Exception:
        return False


NONE, ADDED, CHANGED = 0, 1, 2  # what a cell did to an object: nothing, only added items, changed what was there


def _change(snap: tuple) -> int:
    """NONE, ADDED (new keys or items after the old ones, the old ones as they were) or CHANGED."""
    kind, value, saved = snap
    if kind == "ref":
        return NONE
    if kind in ("tensor", "array", "table"):
        return CHANGED if not _same(value, saved) else NONE
    if kind == "set":
        return NONE if value == saved else ADDED if value > saved else CHANGED
    if kind == "dict":
        if any(k not in value for k, _ in saved):
            return CHANGED
        pairs = [(value[k], s) for k, s in saved]
    elif len(value) < len(saved):
        return CHANGED
    else:
        pairs = list(zip(value, saved))
    worst = max((_item_change(v, s) for v, s in pairs), default=NONE)
    return worst if worst == CHANGED or len(value) == len(saved) else max(worst, ADDED)


def _item_change(current: Any, snap: tuple) -> int:
    """An item of a container: rebound to another object (scalars: to another value), or changed inside."""
    kind, value, _ = snap
    if current is not value and not (isinstance(value, _SCALARS) and _same(current, value)):
        return CHANGED
    return _change(snap)


def _restore(snap: tuple) -> Any:
    """Put the snapshot's contents back into its object, in place where the type allows (so aliases see them);
    returns the object to bind (a copy where in-place restoring is impossible: a tensor or array of another shape)."""
    kind, value, saved = snap
    if kind == "dict":
        items = [(k, _restore(s)) for k, s in saved]
        value.clear()
        value.update(items)
    elif kind == "list":
        value[:] = [_restore(s) for s in saved]
    elif kind == "set":
        value.clear()
        value.update(saved)
    elif kind in ("tensor", "array", "table") and _change(snap):
        if kind == "table":
            return saved.copy(deep=True)
        if value.shape != saved.shape or value.dtype != saved.dtype:
            return saved.clone() if kind == "tensor" else saved.copy()
        if kind == "tensor":
            with sys.modules["torch"].no_grad():
                value.copy_(saved)
        else:
            value[...] = saved
    return value


def _global_names(code: types.CodeType) -> set[str]:
    """The global names a function's code (and the code nested in it) may read."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


def _report(payload: dict[str, Any]) -> None:
    print(MARKER + json.dumps(payload))
