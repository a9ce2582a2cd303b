"""What moto 5.2.5's EC2 leaves out: state-change events, detailed monitoring, CPU credits.

**State-change events.** AWS sends one such event to EventBridge each time an instance enters a state (EC2 user guide,
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

**Detailed monitoring.** moto's MonitorInstances and UnmonitorInstances handlers raise
NotImplementedError (HTTP 500), though its instances keep a monitoring state: RunInstances sets
``Instance.monitoring_state`` from ``Monitoring.Enabled`` and DescribeInstances answers it as
``Monitoring.State``. The wraps give moto's ``Monitoring`` response class both handlers (EC2 API
reference: MonitorInstances, UnmonitorInstances): the instances are looked up with moto's own
``get_multi_instances_by_id`` (an unknown ID fails the call with ``InvalidInstanceID.NotFound``),
their ``monitoring_state`` is set, and the answer names the state the change passes through,
``pending`` or ``disabling``. As with the run states, moto's instance is in the final state at
once: the next DescribeInstances answers ``enabled`` or ``disabled``.

**CPU credits.** moto's RunInstances ignores ``CreditSpecification``, its
DescribeInstanceCreditSpecifications answers ``standard`` for every instance, and it has no
ModifyInstanceCreditSpecification. AWS (EC2 user guide: burstable performance instances; EC2 API
reference: RunInstances, DescribeInstanceCreditSpecifications,
ModifyInstanceCreditSpecification):

- gives a burstable instance (T2, T3, T3a, T4g) the credit option RunInstances names, else its
  family's default: ``standard`` for T2, ``unlimited`` for the others;
- refuses ``CreditSpecification`` for any other instance type with
  ``InstanceCreditSpecification.NotSupported``;
- answers ModifyInstanceCreditSpecification per instance, in
  ``successfulInstanceCreditSpecificationSet`` or, with an error code
  (``InvalidInstanceID.Malformed``, ``InvalidInstanceID.NotFound``, ``IncorrectInstanceState``,
  ``InstanceCreditSpecification.NotSupported``), in ``unsuccessfulInstanceCreditSpecificationSet``.

The option lives on moto's instance, as ``Instance.credit_specification`` (a class attribute,
``None`` until set): the RunInstances handler sets it on the instances it launched, the added
ModifyInstanceCreditSpecification handler sets it, and DescribeInstanceCreditSpecifications
answers it (a burstable instance without one answers its family's default; any other instance
keeps moto's ``standard``, which the EC2 API reference also documents for it).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

import re

from moto.core.responses import ActionResult
from moto.ec2.exceptions import EC2ClientError, InvalidParameterValueError
from moto.ec2.models.instances import Instance, InstanceBackend
from moto.ec2.responses.instances import InstanceResponse
from moto.ec2.responses.monitoring import Monitoring
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


# --- Detailed monitoring --------------------------------------------------------------------


def _monitoring_handler(state: str, answered: str) -> Callable[[Any], ActionResult]:
    """A handler that puts the instances the call names in monitoring ``state`` and answers
    ``answered``, the state the change passes through."""

    def handler(self: Any) -> ActionResult:
        self.error_on_dryrun()
        instances = self.ec2_backend.get_multi_instances_by_id(self._get_param("InstanceIds", []))
        for instance in instances:
            instance.monitoring_state = state
        return ActionResult(
            {"InstanceMonitorings": [{"InstanceId": i.id, "Monitoring": {"State": answered}} for i in instances]}
        )

    return handler


# --- CPU credits ----------------------------------------------------------------------------

#: The burstable performance instance families, the only ones with a CPU credit option.
BURSTABLE = re.compile(r"^(t2|t3|t3a|t4g)\.")
CREDIT_OPTIONS = ("standard", "unlimited")
#: The instance states whose credit option cannot change.
GONE = ("shutting-down", "terminated")
INSTANCE_ID = re.compile(r"^i-[0-9a-f]{8}([0-9a-f]{9})?$")


class CreditSpecificationNotSupported(EC2ClientError):
    """AWS's refusal of a credit option for an instance type that is not burstable."""

    def __init__(self, instance_type: str) -> None:
        super().__init__(
            "InstanceCreditSpecification.NotSupported",
            f"The {instance_type} instance type does not support T2 Unlimited.",
        )


def _family_default(instance_type: str) -> str:
    return "standard" if instance_type.startswith("t2.") else "unlimited"


def _credits_of(instance: Any, answered: str) -> str:
    """The credit option of moto's ``instance``, where moto answered ``answered``."""
    if instance.credit_specification is not None:
        return str(instance.credit_specification)
    if BURSTABLE.match(instance.instance_type):
        return _family_default(instance.instance_type)
    return answered


def _wrap_run_instances() -> None:
    original = InstanceResponse.run_instances

    @functools.wraps(original)
    def run_instances(self: Any) -> Any:
        requested = self._get_param("CreditSpecification.CpuCredits")
        instance_type = self._get_param("InstanceType", "m1.small")
        burstable = BURSTABLE.match(instance_type) is not None
        if requested is not None and not burstable:
            raise CreditSpecificationNotSupported(instance_type)
        if requested is not None and requested not in CREDIT_OPTIONS:
            raise InvalidParameterValueError(requested)
        result = original(self)
        if burstable:
            for instance in result.result.instances:
                instance.credit_specification = requested or _family_default(instance_type)
        return result

    InstanceResponse.run_instances = run_instances


def _wrap_describe_credits() -> None:
    original = InstanceResponse.describe_instance_credit_specifications

    @functools.wraps(original)
    def describe_instance_credit_specifications(self: Any) -> Any:
        result = original(self)
        for item in result.result["InstanceCreditSpecifications"]:
            instance = self.ec2_backend.get_instance_by_id(item["InstanceId"])
            if instance is not None:
                item["CpuCredits"] = _credits_of(instance, item["CpuCredits"])
        return result

    InstanceResponse.describe_instance_credit_specifications = describe_instance_credit_specifications


def _credit_refusal(backend: Any, instance_id: str) -> tuple[Any, dict[str, str] | None]:
    """The instance ``instance_id`` names, and the error AWS answers for it, if any."""
    if not INSTANCE_ID.match(instance_id):
        return None, {"Code": "InvalidInstanceID.Malformed", "Message": f'Invalid id: "{instance_id}"'}
    instance = backend.get_instance_by_id(instance_id)
    if instance is None:
        return None, {
            "Code": "InvalidInstanceID.NotFound",
            "Message": f"The instance ID '{instance_id}' does not exist",
        }
    if instance.state in GONE:
        return instance, {
            "Code": "IncorrectInstanceState",
            "Message": f"The instance '{instance_id}' is not in a state from which it can be modified.",
        }
    if not BURSTABLE.match(instance.instance_type):
        refused = CreditSpecificationNotSupported(instance.instance_type)
        return instance, {"Code": refused.code, "Message": refused.message}
    return instance, None


def modify_instance_credit_specification(self: Any) -> ActionResult:
    """ModifyInstanceCreditSpecification, on moto's instances."""
    self.error_on_dryrun()
    requests = self._get_param("InstanceCreditSpecifications", [])
    for request in requests:
        if request.get("CpuCredits") not in CREDIT_OPTIONS:
            raise InvalidParameterValueError(str(request.get("CpuCredits")))
    successful: list[dict[str, Any]] = []
    unsuccessful: list[dict[str, Any]] = []
    for request in requests:
        instance_id = str(request.get("InstanceId", ""))
        instance, error = _credit_refusal(self.ec2_backend, instance_id)
        if error is not None:
            unsuccessful.append({"InstanceId": instance_id, "Error": error})
            continue
        instance.credit_specification = request["CpuCredits"]
        successful.append({"InstanceId": instance_id})
    return ActionResult(
        {
            "SuccessfulInstanceCreditSpecifications": successful,
            "UnsuccessfulInstanceCreditSpecifications": unsuccessful,
        }
    )


def install() -> None:
    """Wraps InstanceBackend.run_instances, start_instances, stop_instances and
    terminate_instances (state-change events); gives moto's Monitoring handlers for
    MonitorInstances and UnmonitorInstances; wraps InstanceResponse.run_instances and
    describe_instance_credit_specifications and adds its modify_instance_credit_specification
    (CPU credits)."""
    _wrap("run_instances", lambda reservation: list(reservation.instances))
    for name in ("start_instances", "stop_instances", "terminate_instances"):
        _wrap(name, _changed)
    Monitoring.monitor_instances = _monitoring_handler("enabled", "pending")
    Monitoring.unmonitor_instances = _monitoring_handler("disabled", "disabling")
    Instance.credit_specification = None
    _wrap_run_instances()
    _wrap_describe_credits()
    InstanceResponse.modify_instance_credit_specification = modify_instance_credit_specification
