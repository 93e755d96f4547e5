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
class FunctionIdentifier(UniqueTag):
    """pytato's name of a function definition (a tag a user may put on one to find its calls
    again); the library carries it and compares it, and generates no named functions."""

    identifier: object


@dataclass(frozen=True)
class ForceValueArgTag(UniqueTag):
    """pytato's request that loopy pass a 0-d placeholder by value. The library generates no
    loopy code, so it carries the tag and it changes nothing; accepted so that code written for
    pytato runs unchanged."""


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
class AxisIgnoredForPropagationTag(Tag):
    """An axis :func:`pytato_rs.unify_axes_tags` takes no tags from and gives none to (the
    axes of a reference matrix shared by every element, say)."""


@dataclass(frozen=True)
class AssumeNonNegative(Tag):
    """Every value of the tagged array is non-negative."""


@dataclass(frozen=True)
class ExpandedDimsReshape(Tag):
    """The tagged reshape only inserts axes of length 1, at these positions of its result
    (``expand_dims``, ``x[:, None]``)."""

    new_dims: tuple


@dataclass(frozen=True)
class LibraryTag(Tag):
    """A tag of the Rust library with no Python class of its own, shown by its description."""

    description: str


class IgnoredForEqualityTag(Tag):
    """A tag that is not part of what a node is (where it was created): nodes that differ only
    in such tags are equal and hash alike; they are listed in ``non_equality_tags``."""


@dataclass(frozen=True)
class _Frame:
    """One frame of a :class:`_StackSummary`."""

    filename: str
    lineno: int
    name: str
    line: str


@dataclass(frozen=True)
class _StackSummary:
    """A traceback, hashable (pytato's ``_PytatoStackSummary``)."""

    frames: tuple

    def to_stacksummary(self):
        """The traceback as the standard library's :class:`traceback.StackSummary`."""
        import traceback

        return traceback.StackSummary.from_list([(f.filename, f.lineno, f.name, f.line) for f in self.frames])

    def short_str(self):
        """The innermost frame of the user's code, ``file:line, in function``."""
        f = self.frames[-1]
        return f"{f.filename}:{f.lineno}, in {f.name}"


@dataclass(frozen=True)
class CreatedAt(IgnoredForEqualityTag, UniqueTag):
    """Where a node was built: the Python traceback of the call (see
    :func:`pytato_rs.set_traceback_tag_enabled`)."""

    traceback: _StackSummary

    def __str__(self):
        # what drawings show (briefly): the user's innermost frame and its line
        import os

        if not self.traceback.frames:
            return "CreatedAt(?)"
        f = self.traceback.frames[-1]
        return f"CreatedAt({f.line} [{os.path.basename(f.filename)}:{f.lineno}, in {f.name}])"


def _created_here():
    """A :class:`CreatedAt` of the current Python stack, without the frames of this package."""
    import os
    import traceback

    package = os.path.dirname(__file__)
    frames = tuple(
        _Frame(f.filename, f.lineno, f.name, f.line or "")
        for f in traceback.extract_stack()
        if not f.filename.startswith(package)
    )
    return CreatedAt(_StackSummary(frames))


@dataclass(frozen=True)
class Axis:
    """One axis of an array and its tags (``array.axes[i].tags``)."""

    tags: frozenset

    def tags_of_type(self, tag_type):
        """The tags that are instances of ``tag_type``, as a frozenset."""
        return frozenset(tag for tag in self.tags if isinstance(tag, tag_type))


__all__ = [
    "AssumeNonNegative",
    "Axis",
    "ExpandedDimsReshape",
    "ForceValueArgTag",
    "FunctionIdentifier",
    "AxisIgnoredForPropagationTag",
    "CreatedAt",
    "IgnoredForEqualityTag",
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
