"""EC2's "EC2 Instance State-change Notification" events, which moto 5.2.5 never sends.

AWS sends one such event to EventBridge each time an instance enters a state (EC2 user guide,
"State change events for Amazon EC2 instances"): launching or starting goes through ``pending``
to ``running``, stopping through ``stopping`` to ``stopped``, terminating through
``shutting-down`` to ``terminated``. The event::

    {"version": "0", "id": ..., "detail-type": "EC2 Instance State-change Notification",
     "source": "aws.ec2", "account": ..., "time": ..., "region": ...,
     "resources": ["arn:aws:ec2:<region>:<account>:instance/<id>"],
     "detail": {"instance-id": <id>, "state": <state>}}

moto moves an instance to its final state within the call (RunInstances leaves it ``running``,
StopInstances ``stopped``, TerminateInstances ``terminated``; their answers name the
intermediate state, DescribeInstances already the final one). So each of those calls, and
StartInstances, emits the intermediate state's event and then the final state's, right after
moto's own InstanceBackend method returns, to the default bus of the instance's account and
region (see :func:`wraps.events.emit_to_default_bus`). An instance the call does not move (a
start of a running instance, a stop of a stopped one) emits nothing. Reboots change no state.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from moto.ec2.models.instances import InstanceBackend
from moto.utilities.utils import get_partition

from .events import emit_to_default_bus

DETAIL_TYPE = "EC2 Instance State-change Notification"

#: The state each call passes through before moto's final one.
INTERMEDIATE = {
    "run_instances": "pending",
    "start_instances": "pending",
    "stop_instances": "stopping",
    "terminate_instances": "shutting-down",
}


def _emit_state(backend: Any, instance: Any, state: str) -> None:
    region = backend.region_name
    emit_to_default_bus(
        backend.account_id,
        region,
        source="aws.ec2",
        detail_type=DETAIL_TYPE,
        resources=[f"arn:{get_partition(region)}:ec2:{region}:{backend.account_id}:instance/{instance.id}"],
        detail={"instance-id": instance.id, "state": state},
    )


def _emit_transitions(backend: Any, intermediate: str, moved: Iterable[Any]) -> None:
    for instance in moved:
        _emit_state(backend, instance, intermediate)
        _emit_state(backend, instance, instance.state)


def _changed(pairs: list[tuple[Any, Any]]) -> list[Any]:
    """The instances of (instance, previous state) pairs whose state the call changed."""
    return [instance for instance, previous in pairs if previous.name != instance.state]


def _wrap(name: str, moved: Callable[[Any], list[Any]]) -> None:
    original = getattr(InstanceBackend, name)

    @functools.wraps(original)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(self, *args, **kwargs)
        _emit_transitions(self, INTERMEDIATE[name], moved(result))
        return result

    setattr(InstanceBackend, name, wrapper)


def install() -> None:
    """Wraps InstanceBackend.run_instances, start_instances, stop_instances and
    terminate_instances."""
    _wrap("run_instances", lambda reservation: list(reservation.instances))
    for name in ("start_instances", "stop_instances", "terminate_instances"):
        _wrap(name, _changed)
