"""pytato's ``pytato.codegen`` helpers that code written for pytato calls (arraycontext names its
bound data with :func:`_generate_name_for_temp`). The library's own code generation is in its
backends."""

from __future__ import annotations

from .tags import Named, PrefixNamed


def _generate_name_for_temp(expr, var_name_gen, default_prefix="_pt_temp"):
    """A name for ``expr`` from ``var_name_gen`` (a ``pytools.UniqueNameGenerator``): the name
    of its :class:`~pytato_rs.tags.Named` tag, which must be free (a ``ValueError`` otherwise),
    else a fresh name with the prefix of its :class:`~pytato_rs.tags.PrefixNamed` tag, else one
    with ``default_prefix``."""
    named = expr.tags_of_type(Named)
    if named:
        (tag,) = named
        if var_name_gen.is_name_conflicting(tag.name):
            raise ValueError(f"the name {tag.name!r} of a Named tag is taken already (naming {expr!r})")
        var_name_gen.add_name(tag.name)
        return tag.name
    prefixed = expr.tags_of_type(PrefixNamed)
    if prefixed:
        (tag,) = prefixed
        return var_name_gen(tag.prefix)
    return var_name_gen(default_prefix)


__all__ = []
