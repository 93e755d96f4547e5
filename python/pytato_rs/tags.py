"""Tags: metadata on arrays, axes and results, as in pytato (and pytools).

A tag is an immutable, hashable object: write one as a frozen dataclass deriving from
:class:`Tag`. A node may carry one tag of each subclass of :class:`UniqueTag`. The tags the
library acts on are defined here; any other tag is carried along, compared with ``==``, and
propagated by :func:`pytato_rs.unify_axes_tags`.
"""

from __future__ import annotations

from dataclasses import dataclass


class Tag:
    """Base class of tags."""


class UniqueTag(Tag):
    """A tag of which a node carries at most one per family (the class deriving directly from
    ``UniqueTag``)."""


class ImplementationStrategy(UniqueTag):
    """How a node is computed."""


@dataclass(frozen=True)
class ImplStored(ImplementationStrategy):
    """The node is computed into memory once, not inlined into its users."""


@dataclass(frozen=True)
class ImplInlined(ImplementationStrategy):
    """The node is inlined into its users."""


@dataclass(frozen=True)
class Named(UniqueTag):
    """A stored node's name in generated code."""

    name: str


@dataclass(frozen=True)
class PrefixNamed(UniqueTag):
    """A prefix for a stored node's name in generated code."""

    prefix: str


@dataclass(frozen=True)
class CountNamed(UniqueTag):
    """The name of the count a data-dependent length is bound to."""

    name: str


@dataclass(frozen=True)
class LibraryTag(Tag):
    """A tag of the Rust library with no Python class of its own, shown by its description."""

    description: str


@dataclass(frozen=True)
class Axis:
    """One axis of an array and its tags (``array.axes[i].tags``)."""

    tags: frozenset

    def tags_of_type(self, tag_type):
        """The tags that are instances of ``tag_type``, as a frozenset."""
        return frozenset(tag for tag in self.tags if isinstance(tag, tag_type))


__all__ = [
    "Axis",
    "CountNamed",
    "ImplInlined",
    "ImplStored",
    "ImplementationStrategy",
    "LibraryTag",
    "Named",
    "PrefixNamed",
    "Tag",
    "UniqueTag",
]
