"""``Settings`` is composed of one part per concern (orchestrator/config/): the composition
must keep every part's fields, validators and methods."""

from __future__ import annotations

from collections import Counter

from orchestrator.config import Settings
from pydantic import BaseModel
from quarry_common.settings import BaseServiceSettings

PARTS: list[type[BaseModel]] = [
    b for b in Settings.__bases__ if issubclass(b, BaseModel) and b is not BaseServiceSettings
]


def _own_names(part: type[BaseModel]) -> set[str]:
    """The fields, validators and methods a part defines itself."""
    defined = {n for n in vars(part) if not n.startswith("__")} - {"model_config", "_abc_impl"}
    return defined | set(part.model_fields)


def test_every_part_is_a_plain_model() -> None:
    # Only the composed class reads the environment, with one prefix for all.
    assert PARTS
    assert all(not hasattr(p, "settings_customise_sources") for p in PARTS)


def test_no_two_parts_share_a_name() -> None:
    # A validator or method defined in two parts with one name keeps only the first in the MRO,
    # silently: the other part's check would never run.
    names = Counter(n for part in PARTS for n in _own_names(part))
    assert [n for n, count in names.items() if count > 1] == []


def test_the_composition_keeps_every_validator() -> None:
    composed = Settings.__pydantic_decorators__
    for part in PARTS:
        own = part.__pydantic_decorators__
        for kind in ("field_validators", "model_validators"):
            mine, theirs = getattr(own, kind), getattr(composed, kind)
            for name, decorator in mine.items():
                # (classmethods are bound per class: compare where each was written)
                assert theirs[name].func.__qualname__ == decorator.func.__qualname__, name
