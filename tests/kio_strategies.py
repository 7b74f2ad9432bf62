"""Hypothesis strategies for kio's schema entities with short arrays.

``st.from_type(cls)`` draws every array of a message with hypothesis's default sizes (about five
items on average), so a response three arrays deep (Fetch: topics, partitions, aborted
transactions) is hundreds of entities and a tenth of a second to draw. A writer or a checker
reads an array of one, two or three items along the same path as one of fifty; ``entities(cls)``
is ``st.from_type(cls)`` with each array, of entities or of primitives, drawn with at most
``MAX_ITEMS`` items (none and null still drawn). Leaves (numbers, strings, records, uuids) are
kio's own registered strategies, through ``st.from_type``.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing

from hypothesis import strategies as st

MAX_ITEMS = 3


@functools.cache
def entities(cls: type, min_items: int = 0) -> st.SearchStrategy:
    """``cls`` built as ``st.from_type`` builds a dataclass: every field drawn, and a field with a
    default is its default or a drawn value; each array of ``min_items`` to ``MAX_ITEMS`` items
    (a nullable one may still be null)."""
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        strategy = _of(hints[field.name], min_items)
        if field.default is not dataclasses.MISSING:
            strategy = st.just(field.default) | strategy
        kwargs[field.name] = strategy
    return st.builds(cls, **kwargs)


def _of(hint, min_items: int) -> st.SearchStrategy:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_of(arg, min_items) for arg in args))
    if hint is type(None):
        return st.none()
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return st.lists(_of(args[0], min_items), min_size=min_items, max_size=MAX_ITEMS).map(tuple)
    if dataclasses.is_dataclass(hint):
        return st.deferred(lambda: entities(hint, min_items))
    return st.from_type(hint)
