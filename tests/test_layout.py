"""The package's shape: no module of ``course_utils`` imports another that (directly or not) imports it back."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "course_utils"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The ``course_utils`` modules ``path`` imports anywhere in its body (inside functions too): ``from . import x``
    imports the module ``x`` where there is one, else a name of the package."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: {m for m in imports_of(path, set(modules)) if m in modules and m != name and m != "course_utils"}
            for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle, as the path that closes it (depth-first search)."""
    found, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_the_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


def test_the_package_has_no_import_circle():
    graph = import_graph()
    assert "course_utils.resources" in graph and "course_utils.paths" in graph["course_utils.resources"]
    assert cycles(graph) == []


def test_the_package_does_not_import_the_modules_run_as_commands():
    """``python -m course_utils.X`` runs X as ``__main__``; had the package already imported X, its module would exist
    twice (Python warns: 'found in sys.modules ... this may result in unpredictable behaviour')."""
    import re
    import subprocess
    import sys

    root = PACKAGE.parent
    text = (root / "Makefile").read_text() + (root / "README.md").read_text()
    commands = set(re.findall(r"-m (course_utils\.[a-z_]+)", text))
    assert {"course_utils.run_course", "course_utils.rehearsal", "course_utils.build_course_bert"} <= commands
    loaded = subprocess.run([sys.executable, "-c", "import course_utils, sys; print(' '.join(sys.modules))"],
                            capture_output=True, text=True, check=True, cwd=root).stdout.split()
    assert not commands & set(loaded)


def test_importing_the_package_leaves_the_course_bert_builder_and_training_stack_unloaded():
    """``import course_utils`` registers the course checkpoint without importing its builder: lesson 02's pretraining
    loop pulls in transformers' BERT modelling code and accelerate, which every ``python -m course_utils...`` command
    would otherwise load before doing anything."""
    import subprocess
    import sys

    script = ("import course_utils, sys; from course_utils.resources import OFFLINE_CHECKPOINTS; "
              "from course_utils.profiles import COURSE_CHECKPOINT; "
              "print(COURSE_CHECKPOINT in OFFLINE_CHECKPOINTS, ' '.join(sys.modules))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout.split()
    registered, loaded = out[0], set(out[1:])
    assert registered == "True"
    heavy = {"course_utils.course_bert", "course_utils.pretraining", "accelerate",
             "transformers.models.bert.modeling_bert"}
    assert not heavy & loaded, f"import course_utils loaded {sorted(heavy & loaded)}"
