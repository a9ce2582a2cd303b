"""What AWS answers where moto 5.2.5 does not, one check per wrap.

Each check takes the clients of one server (conftest.Aws), makes its calls, and asserts the
values read back or the event fields as the AWS references document them. test_wraps.py runs
every check against the emulator, where it must pass, and against plain moto, where it must fail
with an AssertionError: the day one passes on plain moto, moto answers as AWS does and that wrap
can go (test/README.md).

Setup calls are made plainly: an error there is an error of the test. The calls whose answers a
check is about go through :func:`answer`, which turns a refusal into a failed assertion (AWS
answers them; a server that refuses differs from AWS).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError
from botocore.parsers import ResponseParserError

ACCOUNT = "123456789012"
REGION = "us-east-1"
STATE_CHANGE = "EC2 Instance State-change Notification"
#: The EC2 rule of docs/aws.md#change-events.
STATE_CHANGE_PATTERN = {"source": ["aws.ec2"], "detail-type": [STATE_CHANGE]}
ENVELOPE = {"version", "id", "detail-type", "source", "account", "time", "region", "resources", "detail"}
AMI = "ami-12345678"


def answer(call: Callable[..., Any], **kwargs: Any) -> Any:
    """Calls an operation AWS answers; a refusal fails the check. The answer has no
    ResponseMetadata, so that a failed assertion shows only what was answered."""
    try:
        out = dict(call(**kwargs))
        out.pop("ResponseMetadata", None)
        return out
    except ClientError as err:
        raise AssertionError(
            f"AWS answers {err.operation_name}; this server refused it: {err.response['Error']}"
        ) from err
    except ResponseParserError as err:
        raise AssertionError(f"AWS answers this call; this server failed it: {err}") from err


# --- SQS and EventBridge helpers ------------------------------------------------------------


def queue(aws: Any, name: str, **attributes: str) -> tuple[str, str]:
    """Creates a queue: its URL and ARN."""
    url = aws.sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
    arn = aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def event_queue(aws: Any, name: str) -> tuple[str, str]:
    """A queue that EventBridge may send to (docs/aws.md#the-queue-and-its-policy)."""
    url, arn = queue(aws, name)
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "events.amazonaws.com"},
                "Action": "sqs:SendMessage",
                "Resource": arn,
            }
        ],
    }
    aws.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
    return url, arn


def rule_to_queue(aws: Any, name: str, pattern: dict[str, Any], queue_name: str, **rule: Any) -> str:
    """A rule whose target is a new queue: the queue's URL."""
    url, arn = event_queue(aws, queue_name)
    bus = rule.pop("EventBusName", "default")
    target = {"Id": "queue", "Arn": arn, **rule.pop("target", {})}
    aws.events.put_rule(Name=name, EventPattern=json.dumps(pattern), EventBusName=bus, **rule)
    aws.events.put_targets(Rule=name, EventBusName=bus, Targets=[target])
    return url


def drain(aws: Any, url: str) -> list[Any]:
    """Every message in the queue now, parsed, and deleted."""
    bodies: list[Any] = []
    while True:
        messages = aws.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
        if not messages:
            return bodies
        for m in messages:
            bodies.append(json.loads(m["Body"]))
            aws.sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])


def instance_arn(instance_id: str) -> str:
    return f"arn:aws:ec2:{REGION}:{ACCOUNT}:instance/{instance_id}"


def assert_state_change(event: Any, instance_id: str) -> str:
    """Asserts the EC2 user guide's shape of a state-change event; returns its state."""
    assert set(event) == ENVELOPE, f"the envelope's fields: {sorted(event)}"
    assert event["version"] == "0"
    assert event["detail-type"] == STATE_CHANGE
    assert event["source"] == "aws.ec2"
    assert event["account"] == ACCOUNT
    assert event["region"] == REGION
    assert event["resources"] == [instance_arn(instance_id)]
    assert set(event["detail"]) == {"instance-id", "state"}
    assert event["detail"]["instance-id"] == instance_id
    assert len(event["id"]) == 36, event["id"]
    assert len(event["time"]) == len("2021-11-11T21:29:54Z") and event["time"].endswith("Z"), event["time"]
    return str(event["detail"]["state"])


def states(aws: Any, url: str, instance_id: str) -> list[str]:
    """The states of the state-change events in the queue, sorted (AWS keeps no order)."""
    return sorted(assert_state_change(e, instance_id) for e in drain(aws, url))


# --- the checks -----------------------------------------------------------------------------


def s3_notification_reads_back_event_bridge(aws: Any) -> None:
    """GetBucketNotificationConfiguration: EventBridgeConfiguration, alone or with others."""
    aws.s3.create_bucket(Bucket="eventbridge-bucket")
    _, queue_arn = queue(aws, "bucket-events")
    aws.s3.put_bucket_notification_configuration(
        Bucket="eventbridge-bucket", NotificationConfiguration={"EventBridgeConfiguration": {}}
    )
    got = answer(aws.s3.get_bucket_notification_configuration, Bucket="eventbridge-bucket")
    assert got.get("EventBridgeConfiguration") == {}, got
    aws.s3.put_bucket_notification_configuration(
        Bucket="eventbridge-bucket",
        NotificationConfiguration={
            "EventBridgeConfiguration": {},
            "QueueConfigurations": [{"Id": "q", "QueueArn": queue_arn, "Events": ["s3:ObjectCreated:*"]}],
        },
    )
    got = answer(aws.s3.get_bucket_notification_configuration, Bucket="eventbridge-bucket")
    assert got.get("EventBridgeConfiguration") == {}, got
    assert [q["QueueArn"] for q in got.get("QueueConfigurations", [])] == [queue_arn], got
    aws.s3.put_bucket_notification_configuration(Bucket="eventbridge-bucket", NotificationConfiguration={})
    got = answer(aws.s3.get_bucket_notification_configuration, Bucket="eventbridge-bucket")
    assert "EventBridgeConfiguration" not in got, got


def s3_lifecycle_reads_back_object_sizes(aws: Any) -> None:
    """GetBucketLifecycleConfiguration: ObjectSizeGreaterThan/LessThan in Filter and in And."""
    aws.s3.create_bucket(Bucket="lifecycle-sizes")
    filters = {
        "larger": {"ObjectSizeGreaterThan": 1024},
        "smaller": {"ObjectSizeLessThan": 65536},
        "prefix-tags-sizes": {
            "And": {
                "Prefix": "logs/",
                "Tags": [{"Key": "tier", "Value": "cold"}],
                "ObjectSizeGreaterThan": 500,
                "ObjectSizeLessThan": 64000,
            }
        },
        "between": {"And": {"ObjectSizeGreaterThan": 128, "ObjectSizeLessThan": 1048576}},
    }
    aws.s3.put_bucket_lifecycle_configuration(
        Bucket="lifecycle-sizes",
        LifecycleConfiguration={
            "Rules": [
                {"ID": rule_id, "Status": "Enabled", "Filter": f, "Expiration": {"Days": 30}}
                for rule_id, f in filters.items()
            ]
        },
    )
    rules = answer(aws.s3.get_bucket_lifecycle_configuration, Bucket="lifecycle-sizes")["Rules"]
    got = {r["ID"]: r["Filter"] for r in rules}
    assert got == filters, f"filters read back: {got}"


def s3_list_buckets_pages_with_regions(aws: Any) -> None:
    """ListBuckets: each bucket's BucketRegion, name order, and ContinuationToken pages."""
    names = ["pages-c", "pages-a", "pages-d", "pages-b"]
    for name in names:
        aws.s3.create_bucket(Bucket=name)
    aws.s3.create_bucket(Bucket="pages-w", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    seen: list[tuple[str, str]] = []
    token: str | None = None
    pages = 0
    while True:
        args: dict[str, Any] = {"Prefix": "pages-", "BucketRegion": REGION, "MaxBuckets": 3}
        if token is not None:
            args["ContinuationToken"] = token
        got = answer(aws.s3.list_buckets, **args)
        pages += 1
        seen += [(b["Name"], b.get("BucketRegion", "")) for b in got["Buckets"]]
        token = got.get("ContinuationToken")
        if token is None or pages > 3:
            break
    assert seen == [(n, REGION) for n in sorted(names)], seen
    assert pages == 2, pages
    everything = answer(aws.s3.list_buckets, Prefix="pages-")["Buckets"]
    assert [(b["Name"], b.get("BucketRegion")) for b in everything][-1] == ("pages-w", "us-west-2"), everything


def sqs_reads_back_redrive_allow_policy_by_name(aws: Any) -> None:
    """GetQueueAttributes(RedriveAllowPolicy): the JSON string set by CreateQueue, then by
    SetQueueAttributes."""
    _, source_arn = queue(aws, "redrive-source")
    by_queue = json.dumps({"redrivePermission": "byQueue", "sourceQueueArns": [source_arn]})
    url, _ = queue(aws, "redrive-target", RedriveAllowPolicy=by_queue)
    got = answer(aws.sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["RedriveAllowPolicy"])
    assert got.get("Attributes", {}).get("RedriveAllowPolicy") == by_queue, got
    deny = json.dumps({"redrivePermission": "denyAll"})
    aws.sqs.set_queue_attributes(QueueUrl=url, Attributes={"RedriveAllowPolicy": deny})
    got = answer(aws.sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["RedriveAllowPolicy"])
    assert got.get("Attributes", {}).get("RedriveAllowPolicy") == deny, got


def sqs_reads_back_redrive_allow_policy_in_all(aws: Any) -> None:
    """GetQueueAttributes(All) carries RedriveAllowPolicy."""
    deny = json.dumps({"redrivePermission": "denyAll"})
    url, _ = queue(aws, "redrive-all", RedriveAllowPolicy=deny)
    got = answer(aws.sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert got.get("RedriveAllowPolicy") == deny, sorted(got)


def sqs_set_attributes_keeps_policy(aws: Any) -> None:
    """SetQueueAttributes without Policy leaves the policy; Policy "" removes it."""
    url, _ = event_queue(aws, "policy-kept")
    before = json.loads(aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"])
    aws.sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
    got = answer(aws.sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["Policy", "VisibilityTimeout"])
    attributes = got.get("Attributes", {})
    assert attributes.get("VisibilityTimeout") == "45", attributes
    assert "Policy" in attributes, f"the policy is gone after setting VisibilityTimeout: {attributes}"
    assert json.loads(attributes["Policy"]) == before
    aws.sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})
    got = answer(aws.sqs.get_queue_attributes, QueueUrl=url, AttributeNames=["Policy"])
    assert "Policy" not in got.get("Attributes", {}), got


def s3_object_created_reaches_event_bridge(aws: Any) -> None:
    """A bucket with EventBridge on sends "Object Created" to the matching enabled rules of the
    default bus, shaped as the S3 user guide documents it, with the API as its reason."""
    bucket = "published-bucket"
    aws.s3.create_bucket(Bucket=bucket)
    aws.s3.put_bucket_notification_configuration(
        Bucket=bucket, NotificationConfiguration={"EventBridgeConfiguration": {}}
    )
    pattern = {"source": ["aws.s3"], "detail-type": ["Object Created"], "detail": {"bucket": {"name": [bucket]}}}
    url = rule_to_queue(aws, "object-created", pattern, "object-created")
    disabled = rule_to_queue(aws, "disabled", pattern, "disabled", State="DISABLED")
    aws.events.create_event_bus(Name="custom")
    custom = rule_to_queue(aws, "on-custom-bus", pattern, "custom-bus", EventBusName="custom")
    put = aws.s3.put_object(Bucket=bucket, Key="in/a.csv", Body=b"hello")
    aws.s3.copy_object(Bucket=bucket, Key="in/b.csv", CopySource={"Bucket": bucket, "Key": "in/a.csv"})
    events = sorted(drain(aws, url), key=lambda e: str(e.get("detail", {}).get("object", {}).get("key")))
    assert len(events) == 2, events
    ids = set()
    for event, (key, reason) in zip(events, [("in/a.csv", "PutObject"), ("in/b.csv", "CopyObject")]):
        assert set(event) == ENVELOPE, sorted(event)
        assert (event["version"], event["source"], event["detail-type"]) == ("0", "aws.s3", "Object Created")
        assert (event["account"], event["region"]) == (ACCOUNT, REGION)
        assert event["resources"] == [f"arn:aws:s3:::{bucket}"]
        assert len(event["time"]) == len("2021-11-12T00:00:00Z") and event["time"].endswith("Z"), event["time"]
        detail = event["detail"]
        assert detail.get("bucket") == {"name": bucket}, detail
        obj = detail.get("object", {})
        assert (obj.get("key"), obj.get("size")) == (key, 5), obj
        assert obj.get("etag") == put["ETag"].strip('"'), f"detail.object.etag: {obj}"
        assert "version-id" not in obj, "an unversioned bucket's object has no version ID"
        assert detail.get("reason") == reason, f"detail.reason: {detail.get('reason')}"
        ids.add(event["id"])
    assert len(ids) == 2, f"each event has its own ID: {ids}"
    assert drain(aws, disabled) == [], "a disabled rule receives nothing"
    assert drain(aws, custom) == [], "S3 sends to the default bus only"


def eventbridge_delivers_the_whole_event(aws: Any) -> None:
    """A rule's queue target without an input transformer receives every envelope field."""
    url = rule_to_queue(aws, "whole-event", {"source": ["kubeprovisioner.test"]}, "whole-event")
    aws.events.put_events(
        Entries=[
            {
                "Source": "kubeprovisioner.test",
                "DetailType": "Test Event",
                "Detail": json.dumps({"n": 1}),
                "Resources": ["arn:aws:s3:::some-bucket"],
            }
        ]
    )
    [event] = drain(aws, url)
    assert set(event) == ENVELOPE, sorted(event)
    assert event["account"] == ACCOUNT
    assert (event["source"], event["detail-type"], event["detail"]) == ("kubeprovisioner.test", "Test Event", {"n": 1})
    assert event["resources"] == ["arn:aws:s3:::some-bucket"]


def ec2_emits_state_changes(aws: Any) -> None:
    """Run, stop, start, terminate: each passes through its intermediate state to its final one,
    as events in the EC2 user guide's shape; a start of a running instance changes nothing."""
    url = rule_to_queue(aws, "kubeprovisioner-ec2-state", STATE_CHANGE_PATTERN, "ec2-state")
    instance_id = aws.ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    launched = states(aws, url, instance_id)
    assert launched == ["pending", "running"], f"events of RunInstances: {launched}"
    aws.ec2.stop_instances(InstanceIds=[instance_id])
    assert states(aws, url, instance_id) == ["stopped", "stopping"]
    aws.ec2.start_instances(InstanceIds=[instance_id])
    assert states(aws, url, instance_id) == ["pending", "running"]
    aws.ec2.start_instances(InstanceIds=[instance_id])
    assert states(aws, url, instance_id) == []
    aws.ec2.terminate_instances(InstanceIds=[instance_id])
    assert states(aws, url, instance_id) == ["shutting-down", "terminated"]


def ec2_state_changes_reach_matching_enabled_default_bus_rules(aws: Any) -> None:
    """Only enabled rules of the default bus whose pattern matches receive the events; a target's
    input transformer applies to them."""
    stopped = rule_to_queue(
        aws, "only-stopped", {**STATE_CHANGE_PATTERN, "detail": {"state": ["stopped"]}}, "only-stopped"
    )
    disabled = rule_to_queue(aws, "disabled", STATE_CHANGE_PATTERN, "disabled", State="DISABLED")
    aws.events.create_event_bus(Name="custom")
    custom = rule_to_queue(aws, "on-custom-bus", STATE_CHANGE_PATTERN, "custom-bus", EventBusName="custom")
    transformed = rule_to_queue(
        aws,
        "transformed",
        {**STATE_CHANGE_PATTERN, "detail": {"state": ["running"]}},
        "transformed",
        target={
            "InputTransformer": {
                "InputPathsMap": {"instance": "$.detail.instance-id", "state": "$.detail.state"},
                "InputTemplate": '{"instance": "<instance>", "state": "<state>"}',
            }
        },
    )
    instance_id = aws.ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1)["Instances"][0]["InstanceId"]
    aws.ec2.stop_instances(InstanceIds=[instance_id])
    only_stopped = states(aws, stopped, instance_id)
    assert only_stopped == ["stopped"], f"events for the rule on state stopped: {only_stopped}"
    assert drain(aws, transformed) == [{"instance": instance_id, "state": "running"}]
    assert drain(aws, disabled) == []
    assert drain(aws, custom) == []


# --- EC2 detailed monitoring and CPU credits -----------------------------------------------


def refusal(call: Callable[..., Any], **kwargs: Any) -> str:
    """Calls an operation AWS refuses; its error code. An answer fails the check."""
    try:
        out = call(**kwargs)
    except ClientError as err:
        return str(err.response["Error"]["Code"])
    raise AssertionError(f"AWS refuses this call; this server answered it: {out}")


def launch(aws: Any, instance_type: str, **kwargs: Any) -> str:
    """Runs one instance of `instance_type`: its ID."""
    out = aws.ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1, InstanceType=instance_type, **kwargs)
    return str(out["Instances"][0]["InstanceId"])


def monitoring_state(aws: Any, instance_id: str) -> str:
    out = aws.ec2.describe_instances(InstanceIds=[instance_id])
    return str(out["Reservations"][0]["Instances"][0]["Monitoring"]["State"])


def cpu_credits(aws: Any, *instance_ids: str) -> dict[str, str]:
    """The credit option DescribeInstanceCreditSpecifications answers for each instance."""
    got = answer(aws.ec2.describe_instance_credit_specifications, InstanceIds=list(instance_ids))
    return {c["InstanceId"]: c["CpuCredits"] for c in got.get("InstanceCreditSpecifications", [])}


def ec2_monitoring_turns_on_and_off(aws: Any) -> None:
    """MonitorInstances answers `pending`, and DescribeInstances then reports `enabled`;
    UnmonitorInstances answers `disabling`, then `disabled`; an unknown ID fails the call."""
    instance_id = launch(aws, "t3.micro")
    assert monitoring_state(aws, instance_id) == "disabled"
    got = answer(aws.ec2.monitor_instances, InstanceIds=[instance_id])
    assert got == {"InstanceMonitorings": [{"InstanceId": instance_id, "Monitoring": {"State": "pending"}}]}, got
    assert monitoring_state(aws, instance_id) == "enabled"
    got = answer(aws.ec2.unmonitor_instances, InstanceIds=[instance_id])
    assert got == {"InstanceMonitorings": [{"InstanceId": instance_id, "Monitoring": {"State": "disabling"}}]}, got
    assert monitoring_state(aws, instance_id) == "disabled"
    unknown = refusal(aws.ec2.monitor_instances, InstanceIds=["i-0123456789abcdef0"])
    assert unknown == "InvalidInstanceID.NotFound", unknown


def ec2_credit_specification_reads_back_and_changes(aws: Any) -> None:
    """A burstable instance has the credit option RunInstances names, else its family's default
    (T2 `standard`, T3 `unlimited`); ModifyInstanceCreditSpecification changes it per instance."""
    t3 = launch(aws, "t3.micro")
    t2 = launch(aws, "t2.micro")
    t3_standard = launch(aws, "t3.micro", CreditSpecification={"CpuCredits": "standard"})
    t2_unlimited = launch(aws, "t2.micro", CreditSpecification={"CpuCredits": "unlimited"})
    got = cpu_credits(aws, t3, t2, t3_standard, t2_unlimited)
    assert got == {t3: "unlimited", t2: "standard", t3_standard: "standard", t2_unlimited: "unlimited"}, got
    got = answer(
        aws.ec2.modify_instance_credit_specification,
        InstanceCreditSpecifications=[
            {"InstanceId": t3, "CpuCredits": "standard"},
            {"InstanceId": t2, "CpuCredits": "unlimited"},
        ],
    )
    assert got.get("SuccessfulInstanceCreditSpecifications") == [{"InstanceId": t3}, {"InstanceId": t2}], got
    assert got.get("UnsuccessfulInstanceCreditSpecifications", []) == [], got
    got = cpu_credits(aws, t3, t2)
    assert got == {t3: "standard", t2: "unlimited"}, got


def ec2_credit_specification_only_for_burstable(aws: Any) -> None:
    """Another instance type takes no credit option: RunInstances refuses it with
    InstanceCreditSpecification.NotSupported, and ModifyInstanceCreditSpecification answers that
    per instance, beside the codes of an unknown, a malformed and a terminated instance."""
    code = refusal(
        aws.ec2.run_instances,
        ImageId=AMI,
        MinCount=1,
        MaxCount=1,
        InstanceType="m5.large",
        CreditSpecification={"CpuCredits": "unlimited"},
    )
    assert code == "InstanceCreditSpecification.NotSupported", code
    m5 = launch(aws, "m5.large")
    gone = launch(aws, "t3.micro")
    aws.ec2.terminate_instances(InstanceIds=[gone])
    unknown = "i-0123456789abcdef0"
    got = answer(
        aws.ec2.modify_instance_credit_specification,
        InstanceCreditSpecifications=[
            {"InstanceId": i, "CpuCredits": "unlimited"} for i in (m5, unknown, "instance-1", gone)
        ],
    )
    assert got.get("SuccessfulInstanceCreditSpecifications", []) == [], got
    errors = {u["InstanceId"]: u["Error"]["Code"] for u in got.get("UnsuccessfulInstanceCreditSpecifications", [])}
    assert errors == {
        m5: "InstanceCreditSpecification.NotSupported",
        unknown: "InvalidInstanceID.NotFound",
        "instance-1": "InvalidInstanceID.Malformed",
        gone: "IncorrectInstanceState",
    }, errors


#: Every check, in the order the wraps are listed in test/README.md.
CHECKS: list[Callable[[Any], None]] = [
    s3_notification_reads_back_event_bridge,
    s3_lifecycle_reads_back_object_sizes,
    s3_list_buckets_pages_with_regions,
    sqs_reads_back_redrive_allow_policy_by_name,
    sqs_reads_back_redrive_allow_policy_in_all,
    sqs_set_attributes_keeps_policy,
    s3_object_created_reaches_event_bridge,
    eventbridge_delivers_the_whole_event,
    ec2_emits_state_changes,
    ec2_state_changes_reach_matching_enabled_default_bus_rules,
    ec2_monitoring_turns_on_and_off,
    ec2_credit_specification_reads_back_and_changes,
    ec2_credit_specification_only_for_burstable,
]
