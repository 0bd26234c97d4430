"""What an exercise's task forbids, checked on the answer's syntax tree before its checks count (issue 54).

A task that says "no loops", "without ``.to(torch.bfloat16)``", "write your prediction down before you measure" or
"do not call the course's helper" states a rule a test of the answer's *values* cannot see. The solution cell carries
the rules in its metadata, each with the sentence the student is shown when the answer breaks it::

    "course_rules": [
      {"rule": "round with integer bit operations, not a cast to bfloat16", "forbid": ["bfloat16"]},
      {"rule": "no Python loops: one tensor expression", "loops": true},
      {"rule": "my_prediction is a number written down, not computed", "literal": ["my_prediction"]}
    ]

- ``forbid``: dotted names the answer may not mention: ``"bfloat16"`` matches ``torch.bfloat16``, ``x.bfloat16()``,
  ``from torch import bfloat16`` and the string ``"bfloat16"`` (so ``getattr(torch, "bfloat16")`` is caught too);
  ``"adaptation.equal_tokens"`` matches ``course_utils.adaptation.equal_tokens`` and ``adaptation.equal_tokens``.
- ``loops``: no ``for``, ``while`` or comprehension anywhere in the answer.
- ``literal``: each of these names, wherever the answer assigns it, gets a constant (a number, a string, ``None``,
  arithmetic on numbers): a prediction copied from a measurement (``round(measured, 3)``) is refused, and so is an
  answer that could bind it out of the syntax tree's sight (``globals()``, ``vars()``, ``setattr``, ``__dict__``,
  importing ``sys``, ``builtins``, ``inspect`` or ``__main__``, the name as a string).

An answer with any rule also may not call ``exec``, ``eval``, ``compile`` or ``__import__``: code in a string is code
no rule can read. The reference solution must keep its own rules (:func:`.exercises.find_exercises` checks).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

HIDDEN_CODE = {"exec", "eval", "compile", "__import__"}
LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
KEYS = {"rule", "forbid", "loops", "literal"}


class RuleError(ValueError):
    """A ``course_rules`` entry that cannot be read."""


@dataclass(frozen=True)
class Rule:
    rule: str  # the sentence the student reads when the answer breaks it
    forbid: tuple[str, ...] = ()
    loops: bool = False  # True: loops are forbidden
    literal: tuple[str, ...] = ()


def read_rules(meta: Any, where: str) -> tuple[Rule, ...]:
    """The rules in a solution cell's ``course_rules`` metadata (a list of dicts); ``RuleError`` says what is wrong."""
    if meta is None:
        return ()
    if not isinstance(meta, list):
        raise RuleError(f"{where}: course_rules is a list of {{'rule': ..., 'forbid'|'loops'|'literal': ...}}")
    rules = []
    for n, entry in enumerate(meta, 1):
        if not isinstance(entry, dict) or not isinstance(entry.get("rule"), str) or not entry["rule"].strip():
            raise RuleError(f"{where}: course_rules #{n} needs a 'rule' sentence for the student")
        unknown = set(entry) - KEYS
        if unknown:
            raise RuleError(
                f"{where}: course_rules #{n} has unknown key(s) {sorted(unknown)}; accepted: {sorted(KEYS)}"
            )
        forbid, literal, loops = entry.get("forbid", []), entry.get("literal", []), entry.get("loops", False)
        if not all(isinstance(x, list) and all(isinstance(s, str) and s for s in x) for x in (forbid, literal)):
            raise RuleError(f"{where}: course_rules #{n}: forbid and literal are lists of names")
        if not isinstance(loops, bool) or not (forbid or literal or loops):
            raise RuleError(f"{where}: course_rules #{n} forbids nothing: give forbid, literal or loops: true")
        rules.append(Rule(entry["rule"].strip(), tuple(forbid), loops, tuple(literal)))
    return tuple(rules)


def _dotted(node: ast.AST) -> str | None:
    """``torch.nn.functional.relu`` for that attribute chain, ``x`` for a name; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    elif not parts:
        return None
    return ".".join(reversed(parts))


def _matches(dotted: str, name: str) -> bool:
    return dotted == name or dotted.endswith("." + name)


def _mentions(tree: ast.AST, name: str) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            dotted = _dotted(node)
            if dotted and _matches(dotted, name):
                return True
            if isinstance(node, ast.Attribute) and node.attr == name.rsplit(".", 1)[-1] and "." not in name:
                return True
        elif isinstance(node, ast.ImportFrom):
            if any(_matches(f"{node.module or ''}.{a.name}", name) or a.name == name for a in node.names):
                return True
        elif isinstance(node, ast.Import):
            if any(_matches(a.name, name) for a in node.names):
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value == name or node.value == name.rsplit(".", 1)[-1]:
                return True
    return False


def _constant(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant(node.left) and _constant(node.right)
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_constant(e) for e in node.elts)
    return False


def _assigned(target: ast.AST, name: str) -> bool:
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_assigned(e, name) for e in target.elts)
    return False


def _computed(tree: ast.AST, name: str) -> bool:
    """Does the answer give ``name`` anything but a constant (or bind it in a way that is not a plain assignment)?"""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(_assigned(t, name) for t in node.targets):
            if not all(isinstance(t, ast.Name) for t in node.targets if _assigned(t, name)) or not _constant(
                node.value
            ):
                return True
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and _assigned(node.target, name):
            if isinstance(node, ast.AugAssign) or node.value is None or not _constant(node.value):
                return True
        elif isinstance(node, ast.NamedExpr) and node.target.id == name:
            return True
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.comprehension)):
            targets = [node.target] if not isinstance(node, ast.With) else [i.optional_vars for i in node.items]
            if any(t is not None and _assigned(t, name) for t in targets):
                return True
        elif isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return True
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
    return False


# Ways to bind a name other than by an assignment the syntax tree shows: ``globals()["my_prediction"] = ...``,
# ``setattr(sys.modules["__main__"], ...)``. An answer under a ``literal`` rule may use none of them.
INDIRECT_NAMES = {"globals", "vars", "locals", "setattr", "__builtins__", "__main__"}
INDIRECT_ATTRIBUTES = {"__dict__", "__setattr__", "f_globals", "f_locals"}
INDIRECT_MODULES = {"sys", "builtins", "inspect", "__main__"}  # sys.modules, a frame's globals, the notebook itself


def _binds_indirectly(tree: ast.AST, names: tuple[str, ...]) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in INDIRECT_NAMES:
            return True
        if isinstance(node, ast.Attribute) and node.attr in INDIRECT_ATTRIBUTES:
            return True
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] in INDIRECT_MODULES for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in INDIRECT_MODULES:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in (*names, "__main__"):
            return True
    return False


def broken(code: str, rules: tuple[Rule, ...]) -> list[str]:
    """The rules ``code`` breaks, as the sentences the student reads (an answer that does not parse breaks none:
    running it reports the syntax error)."""
    if not rules:
        return []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    out = []
    hidden = [
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in HIDDEN_CODE
    ]
    if hidden:
        out.append(f"no {hidden[0]}(): the exercise's rules are read from the code you wrote")
    for rule in rules:
        if (
            any(_mentions(tree, name) for name in rule.forbid)
            or (rule.loops and any(isinstance(n, LOOPS) for n in ast.walk(tree)))
            or any(_computed(tree, name) for name in rule.literal)
            or (rule.literal and _binds_indirectly(tree, rule.literal))
        ):
            out.append(rule.rule)
    return out
