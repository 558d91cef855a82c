"""A HyperOpt space (``hp.uniform``, ``hp.choice`` over values or dicts, ...) as tuner's parameters.

Each ``hp`` node is one parameter named by its label, as HyperOpt itself records trials. A choice over values
is a ``tune.choice``; a choice whose options hold parameters (dicts, typically) is the parent of those
parameters, its values the options' names (the constant that tells the options apart, as ``"type": "sgd"``, or
the option's number), and each parameter inside is asked only where its option is chosen. The trainable gets
the space back as HyperOpt would build it: the chosen option's dict, with its constants, nested as written.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias, cast

from tuner.errors import UsageError
from tuner.native_spaces.distributions import BranchDraw, Dist
from tuner.native_spaces.translated import Translated
from tuner.nesting import flatten
from tuner.values import as_float, plain

if TYPE_CHECKING:
    from hyperopt.pyll import Apply

    from tuner.value_types import Config, ConfigDraft, SpaceEntry, Value

FOLLOWED = (
    "hp.choice, uniform, loguniform, quniform, qloguniform, randint, uniformint, normal, qnormal, lognormal"
)


@dataclass(frozen=True)
class Const:
    value: Value


@dataclass(frozen=True)
class Param:
    label: str
    dist: Dist
    cast: str  # "int" or "float": what HyperOpt gives the trainable


@dataclass(frozen=True)
class Choice:
    label: str
    options: tuple[Node, ...]
    names: tuple[Value, ...]  # what the searched parameter's values are: one per option

    @property
    def structural(self) -> bool:
        """Its options hold parameters: it is their parent, not a choice over values."""
        return not all(isinstance(o, Const) for o in self.options)


@dataclass(frozen=True)
class Container:
    kind: str  # "dict", "list" or "tuple"
    items: tuple[tuple[str | int, Node], ...]  # (key or index, node)


# One node of a HyperOpt space as tuner reads it.
Node: TypeAlias = Const | Param | Choice | Container


def translate_hyperopt(space: Mapping[str, SpaceEntry | Apply] | Apply) -> Translated:
    from hyperopt.pyll import as_apply

    root = _node(as_apply(dict(space)) if isinstance(space, Mapping) else as_apply(space))
    params: dict[str, SpaceEntry] = {}
    _collect(root, params, parent=None)
    if not params:
        raise UsageError("space params is a HyperOpt space with no hp.* parameter in it; nothing to search")
    shape = HyperOptShape(root)
    return Translated(params=params, shape=shape, form="a HyperOpt space")


class HyperOptShape:
    """A trial's config (by labels) as HyperOpt would have built it from the space."""

    def __init__(self, root: Node) -> None:
        self.root = root

    def __call__(self, config: Config) -> ConfigDraft:
        built = _build(self.root, flatten(config))
        return built if isinstance(built, dict) else {"value": built}


def _build(node: Node, config: Config) -> Value:
    if isinstance(node, Const):
        return node.value
    if isinstance(node, Param):
        value = as_float(config[node.label])  # drawn from the parameter's range
        return int(value) if node.cast == "int" else float(value)
    if isinstance(node, Choice):
        if not node.structural:
            return config[node.label]
        return _build(node.options[list(node.names).index(config[node.label])], config)
    built = [(key, _build(child, config)) for key, child in node.items]
    if node.kind == "dict":
        return cast("dict[str, Value]", dict(built))  # a dict's keys are its names
    return [v for _, v in built] if node.kind == "list" else tuple(v for _, v in built)


def _collect(node: Node, params: dict[str, SpaceEntry], parent: tuple[Choice, Value] | None) -> None:
    """Every parameter under ``node`` into ``params``; ``parent`` is the structural choice and option name they
    are asked under, if any."""
    if isinstance(node, Container):
        for _, child in node.items:
            _collect(child, params, parent)
        return
    if isinstance(node, Param):
        _add(params, node.label, node.dist, parent)
        return
    if not isinstance(node, Choice):
        return
    if not node.structural:
        constants = cast("tuple[Const, ...]", node.options)  # not structural: its options are constants
        _add(params, node.label, Dist("choice", tuple(o.value for o in constants)), parent)
        return
    if parent is not None:
        raise UsageError(
            f"HyperOpt choice {node.label!r} holds parameters and sits inside an option of choice "
            f"{parent[0].label!r}; tuner follows one level of such choices: make {node.label!r}'s options part of "
            f"{parent[0].label!r}'s"
        )
    _claim(params, node.label)
    params[node.label] = Dist("choice", node.names).domain()
    for name, option in zip(node.names, node.options, strict=True):
        _collect(option, params, (node, name))


def _add(params: dict[str, SpaceEntry], label: str, dist: Dist, parent: tuple[Choice, Value] | None) -> None:
    if parent is None:
        _claim(params, label)
        params[label] = dist.domain()
        return
    choice, option = parent
    existing = getattr(params.get(label), "func", None)
    if isinstance(existing, BranchDraw) and existing.parent == choice.label:
        existing.branches[option] = dist  # the same label in another option of the same choice
        return
    _claim(params, label)
    from ray import tune

    params[label] = tune.sample_from(BranchDraw(choice.label, {option: dist}))


def _claim(params: dict[str, SpaceEntry], label: str) -> None:
    if label in params:
        raise UsageError(f"HyperOpt label {label!r} names two parameters; give each hp.* node its own label")


def _node(apply: Apply) -> Node:
    """HyperOpt's expression graph as Const / Param / Choice / Container, or a UsageError naming what is not
    followed."""
    name = apply.name
    if name == "literal":
        return Const(plain(apply.obj))
    if name in ("dict", "pos_args", "list", "tuple"):
        if name == "dict":
            items = tuple((key, _node(value)) for key, value in apply.named_args)
        else:
            items = tuple(enumerate(_node(a) for a in apply.pos_args))
        return Container("dict" if name == "dict" else ("tuple" if name == "tuple" else "list"), items)
    if name in ("float", "int") and len(apply.pos_args) == 1:
        inner = _node(apply.pos_args[0])
        if not isinstance(inner, Param):
            return inner
        low, high, *q = inner.dist.args
        if name == "int" and inner.dist.kind == "quniform" and float(q[0]).is_integer():  # hp.uniformint
            return Param(inner.label, Dist("qrandint", (math.ceil(low), math.floor(high), int(q[0]))), name)
        return Param(inner.label, inner.dist, name)
    if name == "switch":  # hp.choice (or hp.pchoice, whose weights a model has no use for)
        label = str(apply.pos_args[0].pos_args[0].obj)
        options = tuple(_node(o) for o in apply.pos_args[1:])
        return Choice(label, options, _option_names(options))
    if name == "hyperopt_param":
        label, dist = _hyperopt_param(apply)
        return Param(label, dist, "int" if dist.kind == "randint" else "float")
    raise UsageError(
        f"HyperOpt expression {name!r} in space params is not followed; tuner translates {FOLLOWED}, dicts, "
        "lists and constants (compute derived values in the trainable)"
    )


def _hyperopt_param(apply: Apply) -> tuple[str, Dist]:
    if apply.name != "hyperopt_param":
        raise UsageError(f"HyperOpt expression {apply.name!r} where a labelled hp.* node was expected")
    label = str(apply.pos_args[0].obj)
    dist = apply.pos_args[1]
    args = [a.obj for a in dist.pos_args] + [v.obj for _, v in dist.named_args]
    kind = dist.name
    if kind == "uniform":
        return label, Dist("uniform", (float(args[0]), float(args[1])))
    if kind == "loguniform":  # HyperOpt's bounds are logs
        return label, Dist("loguniform", (math.exp(args[0]), math.exp(args[1])))
    if kind == "quniform":
        return label, Dist("quniform", (float(args[0]), float(args[1]), float(args[2])))
    if kind == "qloguniform":
        return label, Dist("qloguniform", (math.exp(args[0]), math.exp(args[1]), float(args[2])))
    if kind == "randint":
        low, high = (0, args[0]) if len(args) == 1 else (args[0], args[1])
        return label, Dist("randint", (int(low), int(high)))
    if kind == "normal":
        return label, Dist("normal", (float(args[0]), float(args[1])))
    if kind == "qnormal":
        return label, Dist("qnormal", (float(args[0]), float(args[1]), float(args[2])))
    if kind == "lognormal":
        return label, Dist("lognormal", (float(args[0]), float(args[1])))
    raise UsageError(
        f"HyperOpt distribution {kind!r} ({label!r}) is not followed; tuner translates {FOLLOWED}"
    )


def _option_names(options: tuple[Node, ...]) -> tuple[Value, ...]:
    """The values a choice's parameter takes: its options themselves when they are constants; for options
    that hold parameters, the constant that tells them apart (``"type": "sgd"``), else their numbers."""
    if all(isinstance(o, Const) for o in options):
        return tuple(o.value for o in cast("tuple[Const, ...]", options))  # each a Const, as just checked
    if all(isinstance(o, Container) and o.kind == "dict" for o in options):
        dicts = cast("tuple[Container, ...]", options)  # each one a dict, as just checked
        for key, _ in dicts[0].items:
            values = [dict(o.items).get(key) for o in dicts]
            if all(isinstance(v, Const) and isinstance(v.value, (str, int)) for v in values):
                names = tuple(v.value for v in values if isinstance(v, Const))
                if len(set(names)) == len(names):
                    return names
    return tuple(range(len(options)))
