"""The code's layout keeps its promises (docs/architecture.md): no two modules import each
other, directly or round a circle (any import statement counts, a function's or a type
checker's too), and each game's modules hold one job each, none over 800 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAME_MODULE_LINES = 800


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted([*ROOT.glob("referee/**/*.py"), *ROOT.glob("scheduler/**/*.py")]):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project's modules that ``name`` imports (a package's own ``__init__`` excepted:
    a module of a package always runs it first, and importing it is no circle)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            while target and target not in modules:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target and target != name and not name.startswith(target + "."):
                out.add(target)
    return out


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_module_imports_one_that_imports_it_back():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _circles(graph) == []


def test_the_check_finds_a_circle():
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_a_game_is_over_800_lines():
    long = {
        str(path.relative_to(ROOT)): n
        for path in ROOT.glob("referee/games/**/*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > GAME_MODULE_LINES
    }
    assert long == {}


def _code_strings_and_imports(path: Path) -> list[tuple[int, str]]:
    """The string constants of a module's code (its docstrings left out: prose may name a
    game as an example) and the names it imports, with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
        elif isinstance(node, ast.ImportFrom):
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


# the season demo plays a fixed season of named games (docs/organizer-guide.md); the
# registry lists the games' modules
_MAY_NAME_GAMES = {"referee/games/__init__.py", "referee/demo/season.py"}


def test_the_core_names_no_game():
    """Each game lives in one place (its package, templates and docs page): no module
    outside ``referee/games/`` names a game a season file may schedule, by its name or its
    package, in its code (what a game does otherwise than others is asked of the game:
    ``GameType.accounts``, ``step_titles``, ``wraps_own_mail``, ``archive_rounds_per_page``).
    The nomination is the season frame's own step, which the core opens itself."""
    from referee.games import MODULES, playable

    names = set(playable())
    words = names | {MODULES[name].split(".")[2] for name in names}
    found = []
    for path in sorted(ROOT.glob("referee/**/*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("referee/games/") or "migrations" in path.parts or relative in _MAY_NAME_GAMES:
            continue
        for line, text in _code_strings_and_imports(path):
            hits = sorted(w for w in words if w in text.lower())
            if hits:
                found.append(f"{relative}:{line}: {', '.join(hits)} in {text[:60]!r}")
    assert not found, "\n".join(found)


def test_the_shared_templates_name_no_game():
    """The templates every game shares (templates/*/common, and the archive's own pages)
    show no game's name or title to a reader: a game's own words live in its folder. Jinja
    comments may name one as an example."""
    import re

    from referee.games import playable

    games = playable()
    words = {name for name in games} | {game.title.lower() for game in games.values()}
    found = []
    for path in sorted((ROOT / "templates").rglob("*")):
        relative = path.relative_to(ROOT / "templates")
        if not path.is_file() or (len(relative.parts) > 2 and relative.parts[1] != "common"):
            continue  # a game's own folder
        text = re.sub(r"\{#.*?#\}", "", path.read_text(encoding="utf-8"), flags=re.S).lower()
        hits = sorted(w for w in words if w in text)
        if hits:
            found.append(f"templates/{relative.as_posix()}: {', '.join(hits)}")
    assert not found, "\n".join(found)
