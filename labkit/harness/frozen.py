"""Read-only JSON values, so a conversation can be shared instead of copied.

A message never changes once it joins the conversation, so the loop freezes it once
and hands the same object to the model, the events and the recorder. A frozen value
is still a ``dict`` or a ``list``: it compares equal to the plain one, ``json.dumps``
and the Ollama SDK read it as they are, and ``.copy()`` or ``copy.deepcopy`` give an
ordinary value to edit. Every method that would change it raises ``TypeError``.
"""

from __future__ import annotations

import copy


def _refuse(self, *args, **kwargs):
    raise TypeError(
        f"this {type(self).__name__} is part of a conversation and cannot be "
        "changed; edit a copy of it instead (copy.deepcopy(value) or value.copy())"
    )


class FrozenDict(dict):
    """A ``dict`` that refuses every change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __deepcopy__(self, memo):
        return {key: copy.deepcopy(value, memo) for key, value in self.items()}

    def __reduce__(self):
        return FrozenDict, (dict(self),)


class FrozenList(list):
    """A ``list`` that refuses every change."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __deepcopy__(self, memo):
        return [copy.deepcopy(value, memo) for value in self]

    def __reduce__(self):
        return FrozenList, (list(self),)


class TooDeep(ValueError):
    """A value nested more deeply than ``freeze`` was told to accept."""


def freeze(value: object, max_depth: int = 64) -> object:
    """A read-only copy of a JSON value (dicts, lists, str, numbers, bool, None).

    Strings and numbers are shared, being immutable already, and so is a value frozen
    already. Raises :class:`TooDeep` when containers nest more than ``max_depth``
    levels, so a hostile value cannot exhaust the stack.
    """

    def frozen(value: object, depth: int) -> object:
        if type(value) in (FrozenDict, FrozenList):
            return value
        if not isinstance(value, dict | list | tuple):
            return value
        if depth == max_depth:
            raise TooDeep(f"nested more than {max_depth} levels deep")
        if isinstance(value, dict):
            return FrozenDict((key, frozen(item, depth + 1)) for key, item in value.items())
        return FrozenList(frozen(item, depth + 1) for item in value)

    return frozen(value, 0)
