"""EventBridge events as AWS delivers them.

- A target without an input transformer receives the whole event, ``account`` included
  (EventBridge user guide, "Amazon EventBridge events": the envelope's fields). moto 5.2.5 builds
  such a target's input from ``EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE``, which names
  every envelope field but ``account``, although its ``DEFAULT_EVENT_INPUT_PATHS_MAP`` already
  reads it: the wrap adds ``account`` to the template.
- :func:`emit_to_default_bus` is how an AWS service's own event enters EventBridge: it goes to
  the default event bus of the resource's account and region, and reaches every enabled rule
  there whose pattern matches it (EventBridge user guide, "Events from AWS services"). It reuses
  moto's PutEvents path: the same envelope, and each rule's own ``send_to_targets``, which
  matches the pattern and delivers to the targets.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from moto.core.utils import unix_time
from moto.events.models import events_backends
from moto.events.utils import _BASE_EVENT_MESSAGE, EventTemplateParser
from moto.moto_api._internal import mock_random as random

log = logging.getLogger("aws-emulator.events")

_REGION_FIELD = '"region": "<region>"'


def emit_to_default_bus(
    account_id: str,
    region_name: str,
    *,
    source: str,
    detail_type: str,
    resources: list[str],
    detail: dict[str, Any],
) -> None:
    """Sends one event from an AWS service to the enabled rules of the default bus.

    Delivery failures are logged and never raised: AWS delivers service events asynchronously,
    so a missing or unwritable target never fails the API call that caused the event.
    """
    if region_name not in events_backends[account_id]:
        return
    bus = events_backends[account_id][region_name].event_buses.get("default")
    if bus is None:
        return
    event_id = str(random.uuid4())
    now = unix_time()
    for rule in list(bus.rules.values()):
        if rule.state != "ENABLED":
            continue
        event = copy.deepcopy(_BASE_EVENT_MESSAGE)
        event.update(
            {
                "id": event_id,
                "detail-type": detail_type,
                "source": source,
                "account": account_id,
                "time": now,
                "region": region_name,
                "resources": list(resources),
                "detail": copy.deepcopy(detail),
                "ingestion-time": now,
            }
        )
        try:
            rule.send_to_targets(event)
        except Exception:  # noqa: BLE001 - a target's failure is the target's, not the caller's
            log.warning("event %s (%s) not delivered to rule %s", event_id, detail_type, rule.name, exc_info=True)


def install() -> None:
    """Adds ``account`` to EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE."""
    template = EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE
    if '"account"' in template:
        return
    if _REGION_FIELD not in template:
        raise RuntimeError(f"moto's default event input template has changed: {template}")
    EventTemplateParser.DEFAULT_EVENT_INPUT_TEMPLATE = template.replace(
        _REGION_FIELD, f'"account": "<account>", {_REGION_FIELD}'
    )
