"""moto's reset API clears what the wraps add: they keep it in moto's own backends."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError
from checks import AMI, STATE_CHANGE_PATTERN, drain, event_queue, queue, rule_to_queue
from conftest import Aws


def test_reset_clears_what_the_wraps_keep(emulator: Aws) -> None:
    aws = emulator
    aws.s3.create_bucket(Bucket="reset-bucket")
    aws.s3.put_bucket_notification_configuration(
        Bucket="reset-bucket", NotificationConfiguration={"EventBridgeConfiguration": {}}
    )
    aws.s3.put_bucket_lifecycle_configuration(
        Bucket="reset-bucket",
        LifecycleConfiguration={
            "Rules": [{"ID": "r", "Status": "Enabled", "Filter": {"ObjectSizeGreaterThan": 1}, "Expiration": {"Days": 1}}]
        },
    )
    event_queue(aws, "reset-queue")
    url, _ = queue(aws, "reset-allow", RedriveAllowPolicy=json.dumps({"redrivePermission": "denyAll"}))
    rule_to_queue(aws, "reset-rule", STATE_CHANGE_PATTERN, "reset-events")

    aws.reset()

    aws.s3.create_bucket(Bucket="reset-bucket")
    assert "EventBridgeConfiguration" not in aws.s3.get_bucket_notification_configuration(Bucket="reset-bucket")
    with pytest.raises(ClientError, match="NoSuchLifecycleConfiguration"):
        aws.s3.get_bucket_lifecycle_configuration(Bucket="reset-bucket")
    url, _ = queue(aws, "reset-queue")
    assert "Policy" not in aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    url, _ = queue(aws, "reset-allow")
    assert "RedriveAllowPolicy" not in aws.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert aws.events.list_rules()["Rules"] == []
    events_url, _ = queue(aws, "reset-events")
    aws.ec2.run_instances(ImageId=AMI, MinCount=1, MaxCount=1)
    assert drain(aws, events_url) == []
