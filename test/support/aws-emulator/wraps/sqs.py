"""SQS queue attributes as AWS keeps them.

- ``RedriveAllowPolicy``: moto 5.2.5 stores it (CreateQueue, SetQueueAttributes) but refuses it
  by name in GetQueueAttributes (``InvalidAttributeName``) and leaves it out of ``All``, because
  it is missing from ``Queue.BASE_ATTRIBUTES``. AWS answers it, as the JSON string that was set,
  both by name and in ``All`` (SQS API reference, GetQueueAttributes, and its
  QueueAttributeName enum).
- ``Policy``: moto's ``Queue._set_attributes`` sets the policy from every SetQueueAttributes
  call, so a call that does not name ``Policy`` removes the queue's policy. AWS changes only the
  attributes a call names (SQS API reference, SetQueueAttributes); a policy is removed by setting
  it to the empty string.
"""

from __future__ import annotations

import functools
from typing import Any

from moto.sqs.models import Queue

REDRIVE_ALLOW_POLICY = "RedriveAllowPolicy"


def _keep_policy_unless_named(original: Any) -> Any:
    @functools.wraps(original)
    def _set_attributes(self: Queue, attributes: dict[str, Any], now: float | None = None) -> None:
        # A queue being created names Policy among its defaults; an update names it or not.
        kept = None if "Policy" in attributes else getattr(self, "_policy_json", None)
        original(self, attributes, now)
        if kept is not None:
            self._policy_json = kept

    return _set_attributes


def install() -> None:
    """Adds RedriveAllowPolicy to Queue.BASE_ATTRIBUTES (unset: None, which GetQueueAttributes
    leaves out, as it does an unset Policy) and wraps Queue._set_attributes."""
    if REDRIVE_ALLOW_POLICY not in Queue.BASE_ATTRIBUTES:
        Queue.BASE_ATTRIBUTES = [*Queue.BASE_ATTRIBUTES, REDRIVE_ALLOW_POLICY]
    # Queues created without it read the class default; CreateQueue and SetQueueAttributes set
    # the instance attribute (moto stores every attribute it is given under its snake_case name).
    Queue.redrive_allow_policy = None  # type: ignore[attr-defined]
    Queue._set_attributes = _keep_policy_unless_named(Queue._set_attributes)  # type: ignore[method-assign]
