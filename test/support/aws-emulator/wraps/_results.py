"""Adjusting what a moto response handler serializes, without copying the handler.

moto's REST handlers build a plain result dict and hand it to ``BaseResponse.serialized``, which
serializes it against botocore's model of the operation. :func:`adjust_result` wraps a handler so
that, for the duration of one call, the result dict can be amended just before it is serialized:
the original handler still does all of its own work, and the serializer still decides the wire
format (XML element names, flattening, empty elements) from AWS's model.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def adjust_result(
    handler: Callable[..., Any], adjust: Callable[[Any, dict[str, Any]], None]
) -> Callable[..., Any]:
    """Wraps ``handler`` (a method of a ``BaseResponse`` subclass) so that ``adjust(response,
    result)`` may change ``result`` (the dict the handler serializes) in place first.

    Results that are not dicts (``EmptyResult``, errors) are serialized untouched.
    """

    @functools.wraps(handler)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        serialized = self.serialized

        def amended(action_result: Any) -> Any:
            if isinstance(action_result.result, dict):
                adjust(self, action_result.result)
            return serialized(action_result)

        self.serialized = amended
        try:
            return handler(self, *args, **kwargs)
        finally:
            del self.serialized

    return wrapper
