"""Frozen records without ``@dataclass``'s start-up cost (see :class:`Record`)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, ClassVar

__all__ = ["Record", "record_fields"]


class Record:
    """Frozen-record behaviour, written once for mcpctl's records
    (the config model's classes, :class:`mcpctl.paths.Paths`).

        ``@dataclass`` generating ``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and the
        frozen ``__setattr__`` compiles each of them at import: for these classes that was a
        quarter of ``mcpctl list``'s own start-up (bench/README.md). They keep the decorator with
        ``init=False, repr=False, eq=False`` (so :func:`dataclasses.replace` and
        :func:`dataclasses.fields` still work), write their ``__init__`` by hand and get the rest
        from here, behaving as ``@dataclass(frozen=True)`` would.
    """

    __slots__ = ()
    _FIELDS: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        d = self.__dict__
        return tuple(d[name] for name in self._FIELDS)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, Record)
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        d = self.__dict__
        inner = ", ".join(f"{name}={d[name]!r}" for name in self._FIELDS)
        return f"{type(self).__qualname__}({inner})"


def record_fields(cls: type[Record]) -> None:
    cls._FIELDS = tuple(cls.__dataclass_fields__)  # type: ignore[attr-defined]
