"""Finding search spaces and trainables by name or path.

``tuner spaces`` reads space files with ``ast`` instead of importing them, so listing never pays for
importing Ray or torch.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from tuner.errors import UsageError, an
from tuner.spec import SearchSpace

if TYPE_CHECKING:
    from tuner.launch.trial.forms import TrainableForm

SPACES_DIR = Path(__file__).resolve().parents[2] / "search_spaces"
TRAINABLES_DIR = Path(__file__).resolve().parents[2] / "trainables"


@dataclass(frozen=True)
class SpaceSummary:
    name: str
    description: str
    trainable: str
    metric: str
    mode: str  # as written: "min", "min,max" for several, "?" where unread
    path: Path


def builtin_space_names() -> list[str]:
    return sorted(p.stem for p in SPACES_DIR.glob("*.py") if not p.name.startswith("_"))


def is_space_path(ref: str) -> bool:
    return ref.endswith(".py") or "/" in ref or "\\" in ref


def is_module_ref(ref: str) -> bool:
    """``package.module``, or a top-level ``module`` that no built-in space is named: a space module importable
    by name (how a submitted job finds a shipped file)."""
    if is_space_path(ref) or ref.startswith(IN_MEMORY):
        return False
    if "." in ref:
        return True
    if (SPACES_DIR / f"{ref}.py").is_file():
        return False
    try:
        return importlib.util.find_spec(ref) is not None
    except (ImportError, ValueError):
        return False


def space_path(ref: str) -> Path:
    """The file a ``--space`` value points at: a built-in name or a path to a ``.py`` file."""
    if is_space_path(ref):
        path = Path(ref).expanduser()
        if not path.is_file():
            raise UsageError(f"space file {ref} not found")
        if path.suffix != ".py":
            raise UsageError(f"space file {ref} must be a Python file ending in .py")
        return path.resolve()
    path = SPACES_DIR / f"{ref}.py"
    if not path.is_file() or ref.startswith("_"):
        names = ", ".join(builtin_space_names()) or "(none)"
        raise UsageError(
            f"unknown space {ref!r}; built-in spaces: {names}; or pass a path to a .py file, or a module "
            "importable by name (on PYTHONPATH)"
        )
    return path


def space_label(ref: str) -> str:
    """A short name for a space reference, used in experiment names."""
    if ref.startswith(IN_MEMORY):  # a SearchSpace object given to tuner.sweep: its trainable's name
        return ref.removeprefix(IN_MEMORY).rsplit("-", 1)[0]
    if is_module_ref(ref):
        return ref.rsplit(".", 1)[-1]
    return Path(ref).stem if is_space_path(ref) else ref


_LOADED: dict[str, SearchSpace] = {}
IN_MEMORY = "python:"  # a SearchSpace object given to tuner.sweep, kept in this process
_KEPT: dict[str, SearchSpace] = {}


def keep_in_memory(space: SearchSpace) -> str:
    """The reference a sweep saves for a space given as an object (``tuner resume`` in another process then
    needs the space as a file or module)."""
    ref = f"{IN_MEMORY}{space.trainable_name}-{id(space):x}"
    _KEPT[ref] = space
    return ref


def _in_memory(ref: str) -> SearchSpace:
    if ref in _KEPT:
        return _KEPT[ref]
    raise UsageError(
        f"space {ref} was a Python object in the process that started the sweep; pass the space as "
        "a file or module to use it here"
    )


def load_space(ref: str) -> SearchSpace:
    """Import a space module and return its ``SPACE``; user files may define their trainable inline.

    A space is imported once per process, whichever of its names is used again (a space file that
    prints or logs on import does so once per sweep); a file edited since is imported afresh. A
    ``python:`` reference is a SearchSpace object given to ``tuner.sweep`` in this process.
    """
    if ref.startswith(IN_MEMORY):
        return _in_memory(ref)
    if is_module_ref(ref):
        key = ref
    else:
        path = space_path(ref)
        stat = path.stat()
        key = f"{path}@{stat.st_mtime_ns}:{stat.st_size}"
    if key not in _LOADED:
        _LOADED[key] = _import_space(ref)
    return _LOADED[key]


def _import_space(ref: str) -> SearchSpace:
    from tuner.ray_compat import keep_parameters

    keep_parameters()  # a space's tune.with_parameters data stays at hand for a later Ray session
    if is_module_ref(ref):
        try:
            found = importlib.util.find_spec(ref) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise UsageError(f"unknown space {ref!r}: no module of that name can be imported")
        with _loading(f"space module {ref}"):
            return _space_of(importlib.import_module(ref), ref)
    path = space_path(ref)
    builtin = path.parent == SPACES_DIR
    with _loading(f"space file {path}"):
        if builtin:
            module = importlib.import_module(f"search_spaces.{path.stem}")
        else:
            module = _import_file(f"tuner_user_space_{path.stem}", path)
    return _space_of(module, str(path))


@contextmanager
def _loading(what: str) -> Iterator[None]:
    """Whatever importing a space raises becomes one line naming the space."""
    try:
        yield
    except SyntaxError as exc:
        raise UsageError(f"{what} does not parse: line {exc.lineno}: {exc.msg}") from exc
    except UsageError as exc:
        if str(exc).startswith(what):
            raise
        raise UsageError(f"{what}: {exc}") from exc
    except Exception as exc:
        raise UsageError(f"{what} failed to load{_user_line(exc)}: {type(exc).__name__}: {exc}") from exc


def _user_line(exc: BaseException) -> str:
    """Where the user's own code raised (`` at line 12``, or `` at helper.py line 3`` in a module beside it):
    the innermost frame outside tuner and the installed packages, the space file's first."""
    import sysconfig
    import traceback

    own = Path(__file__).resolve().parents[1]
    stdlib = sysconfig.get_paths()["stdlib"]
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if f.filename
        and not f.filename.startswith("<")
        and own not in Path(f.filename).resolve().parents
        and "-packages" not in f.filename
        and not f.filename.startswith(stdlib)
    ]
    if not frames:
        return ""
    frame = frames[-1]
    first = frames[0].filename
    return (
        f" at line {frame.lineno}"
        if frame.filename == first
        else f" at {Path(frame.filename).name} line {frame.lineno}"
    )


def _space_of(module: ModuleType, where: str) -> SearchSpace:
    space = getattr(module, "SPACE", None)
    if space is None:
        raise UsageError(
            f"space file {where} defines no SPACE; add SPACE = SearchSpace(trainable=..., params={{...}})"
        )
    if not isinstance(space, SearchSpace):
        raise UsageError(f"SPACE in {where} is {an(type(space).__name__)}, not a tuner.SearchSpace")
    return space


def _import_file(module_name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"space file {path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    # a module beside the space file imports as it does for `python space.py` (after everything else on the path)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.append(folder)
    before = set(sys.modules)
    # the user's folder gets no __pycache__ from reading their space (a refused sweep changes nothing they had)
    writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    finally:
        sys.dont_write_bytecode = writes
    # Ray workers cannot import a user's file by this made-up module name, nor its neighbours from a folder that
    # is not on their path: ship their functions by value.
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(module)
    for name in set(sys.modules) - before:  # a module or a package right beside it, not one of site-packages
        where = Path(getattr(sys.modules[name], "__file__", None) or "/").resolve()
        if where in (Path(folder, f"{name}.py"), Path(folder, name, "__init__.py")):
            cloudpickle.register_pickle_by_value(sys.modules[name])
    return module


# --- trainables ----------------------------------------------------------------------------------


def builtin_trainable_names() -> list[str]:
    names = []
    for path in sorted(TRAINABLES_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.FunctionDef) and node.name == "train" for node in tree.body):
            names.append(path.stem)
    return names


def resolve_trainable(trainable: str | TrainableForm) -> TrainableForm:
    """A function trainable from a space's ``trainable``: a callable, ``"name"`` or ``"module:function"``."""
    if callable(trainable):
        return trainable
    module_name, _, attr = trainable.partition(":")
    attr = attr or "train"
    if ":" not in trainable:
        if trainable not in builtin_trainable_names():
            valid = ", ".join(builtin_trainable_names())
            raise UsageError(
                f"unknown trainable {trainable!r}; built-in: {valid}; or use 'package.module:function'"
            )
        module_name = f"trainables.{trainable}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"trainable {trainable!r}: cannot import {module_name}: {exc}") from exc
    function = getattr(module, attr, None)
    if not callable(function):
        raise UsageError(f"trainable {trainable!r}: {module_name} has no function {attr!r}")
    return function


# --- listing without importing -------------------------------------------------------------------


def summarize_space_file(path: Path) -> SpaceSummary:
    """Describe a space file from its source: docstring, trainable, metric and mode."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError as exc:
        return SpaceSummary(path.stem, f"(does not parse: line {exc.lineno})", "?", "?", "?", path)
    doc = (ast.get_docstring(tree) or "").strip().splitlines()
    fields: dict[str, str] = {"trainable": "?", "metric": "loss", "mode": "min"}
    for node in tree.body:
        targets = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        if "SPACE" in targets and isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            for kw in node.value.keywords:
                if kw.arg in fields:
                    fields[kw.arg] = _literal_text(kw.value)
                elif kw.arg == "metrics" and isinstance(kw.value, ast.Dict):  # several objectives
                    fields["metric"] = ",".join(_literal_text(k) for k in kw.value.keys if k is not None)
                    fields["mode"] = ",".join(_literal_text(v) for v in kw.value.values)
    return SpaceSummary(
        path.stem, doc[0] if doc else "", fields["trainable"], fields["metric"], fields["mode"], path
    )


def _literal_text(node: ast.AST) -> str:
    try:
        return str(ast.literal_eval(node))
    except ValueError:
        return ast.unparse(node)


def list_spaces() -> list[SpaceSummary]:
    return [summarize_space_file(SPACES_DIR / f"{name}.py") for name in builtin_space_names()]
