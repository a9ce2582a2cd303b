"""S3 read-backs that moto 5.2.5 stores but does not answer.

- GetBucketNotificationConfiguration leaves out ``EventBridgeConfiguration``, which
  PutBucketNotificationConfiguration stored (and moto even delivers the bucket's events to
  EventBridge). AWS answers it as an empty ``<EventBridgeConfiguration/>`` element while the
  bucket sends events to EventBridge (S3 API reference, GetBucketNotificationConfiguration and
  the NotificationConfiguration data type).
- GetBucketLifecycleConfiguration leaves out a rule filter's ``ObjectSizeGreaterThan`` and
  ``ObjectSizeLessThan``, at the top of ``Filter`` and inside ``And``: moto's LifecycleFilter and
  LifecycleAndFilter have no place for them, so the rule comes back with an empty filter. AWS
  answers them as they were put (S3 API reference, LifecycleRuleFilter and
  LifecycleRuleAndOperator: both are Long, in bytes).
- The "Object Created" event a bucket with EventBridge turned on sends to EventBridge: moto's
  ``_send_event_bridge_message`` names the object's ETag ``eTag`` and its ``reason`` after the
  event type (``ObjectCreated``), reuses one event ID, and delivers to every rule of every bus,
  disabled ones included. AWS sends it to the default bus of the bucket's account and region,
  with a new ID, ``detail.object.etag``, ``version-id`` only in a versioned bucket, and as
  ``reason`` the API that created the object: ``PutObject``, ``POST Object``, ``CopyObject`` or
  ``CompleteMultipartUpload`` (S3 user guide, "EventBridge event message structure"). The wrap
  sends those events through :func:`wraps.events.emit_to_default_bus`, as the EC2 wrap sends
  its own; every other event type still goes through moto's function.
- ListBuckets answers neither a bucket's ``BucketRegion`` nor a ``ContinuationToken``: moto cuts
  the list at ``max-buckets`` and says nothing of the rest. AWS names each bucket's region, lists
  the buckets in name order, and answers a ``ContinuationToken`` while more buckets match, which
  the next request passes as ``continuation-token`` (S3 API reference, ListBuckets; MaxBuckets is
  1 to 10,000, and 10,000 when not given). The wrap pages moto's own filtered list that way.
"""

from __future__ import annotations

import base64
import functools
from typing import Any

from moto.moto_api._internal import mock_random as random
from moto.s3 import notifications
from moto.s3.models import FakeBucket
from moto.s3.responses import S3Response

from ._results import adjust_result
from .events import emit_to_default_bus

#: The API behind each kind of "Object Created" event, as the event's ``detail.reason`` names it.
CREATED_REASONS = {
    "s3:ObjectCreated:Put": "PutObject",
    "s3:ObjectCreated:Post": "POST Object",
    "s3:ObjectCreated:Copy": "CopyObject",
    "s3:ObjectCreated:CompleteMultipartUpload": "CompleteMultipartUpload",
}

#: ListBuckets' page size when the request names none, and the most it may name.
LIST_BUCKETS_MAX = 10_000

#: The two size conditions of a lifecycle filter, as the API names them.
OBJECT_SIZE_FIELDS = ("ObjectSizeGreaterThan", "ObjectSizeLessThan")


def _with_event_bridge(response: Any, result: dict[str, Any]) -> None:
    config = response.backend.get_bucket_notification_configuration(response.bucket_name)
    if config is not None and config.event_bridge is not None:
        result["EventBridgeConfiguration"] = {}


def _keep_object_sizes(target: Any, source: dict[str, Any] | None) -> None:
    """Records the size conditions of ``source`` (a parsed Filter or And) on moto's filter object."""
    target.object_sizes = {
        field: int(source[field]) for field in OBJECT_SIZE_FIELDS if source and source.get(field) is not None
    }


def _set_lifecycle(original: Any) -> Any:
    @functools.wraps(original)
    def set_lifecycle(self: FakeBucket, rules: list[dict[str, Any]]) -> None:
        original(self, rules)
        # moto keeps one LifecycleRule per rule put, in order.
        for raw, rule in zip(rules, self.rules):
            if rule.filter is None:
                continue
            raw_filter = raw.get("Filter") or {}
            _keep_object_sizes(rule.filter, raw_filter)
            if rule.filter.and_filter is not None:
                _keep_object_sizes(rule.filter.and_filter, raw_filter.get("And"))

    return set_lifecycle


def _with_object_sizes(response: Any, result: dict[str, Any]) -> None:
    rules = response.backend.get_bucket_lifecycle(response.bucket_name)
    # The handler answers one rule per stored rule, in order.
    for answered, rule in zip(result.get("Rules", []), rules):
        if rule.filter is None or "Filter" not in answered:
            continue
        answered["Filter"].update(getattr(rule.filter, "object_sizes", {}))
        if rule.filter.and_filter is not None and "And" in answered["Filter"]:
            answered["Filter"]["And"].update(getattr(rule.filter.and_filter, "object_sizes", {}))


def _send_event_bridge_message(original: Any) -> Any:
    @functools.wraps(original)
    def send(account_id: str, bucket: FakeBucket, event_name: Any, key: Any) -> None:
        reason = CREATED_REASONS.get(str(getattr(event_name, "value", event_name)))
        if reason is None:
            original(account_id, bucket, event_name, key)
            return
        obj: dict[str, Any] = {"key": key.name, "size": key.size, "etag": key.etag.strip('"')}
        if bucket.is_versioned:
            obj["version-id"] = key.version_id
        obj["sequencer"] = random.get_random_hex(16).upper()
        emit_to_default_bus(
            account_id,
            bucket.region_name,
            source="aws.s3",
            detail_type="Object Created",
            resources=[bucket.arn],
            detail={
                "version": "0",
                "bucket": {"name": bucket.name},
                "object": obj,
                "request-id": random.get_random_hex(16).upper(),
                "requester": account_id,
                "source-ip-address": "127.0.0.1",
                "reason": reason,
            },
        )

    return send


def _paged_buckets(response: Any, result: dict[str, Any]) -> None:
    """ListBuckets as AWS answers it: each bucket's region, name order, continuation tokens."""
    prefix = response._get_param("prefix")
    region = response._get_param("bucket-region")
    size = int(response._get_param("max-buckets") or LIST_BUCKETS_MAX)
    after = response._get_param("continuation-token")
    matching = sorted(
        response.backend.list_buckets(prefix=prefix, bucket_region=region, max_buckets=None),
        key=lambda b: b.name,
    )
    if after:
        matching = [b for b in matching if b.name > base64.urlsafe_b64decode(after).decode()]
    page = matching[:size]
    result["Buckets"] = [
        {"Name": b.name, "CreationDate": b.creation_date_ISO8601, "BucketRegion": b.region_name} for b in page
    ]
    if prefix:
        result["Prefix"] = prefix
    if len(matching) > size:
        result["ContinuationToken"] = base64.urlsafe_b64encode(page[-1].name.encode()).decode()


def install() -> None:
    """Wraps S3Response.all_buckets, S3Response.get_bucket_notification, FakeBucket.set_lifecycle,
    S3Response.get_bucket_lifecycle and moto.s3.notifications._send_event_bridge_message."""
    S3Response.all_buckets = adjust_result(S3Response.all_buckets, _paged_buckets)  # type: ignore[method-assign]
    S3Response.get_bucket_notification = adjust_result(  # type: ignore[method-assign]
        S3Response.get_bucket_notification, _with_event_bridge
    )
    FakeBucket.set_lifecycle = _set_lifecycle(FakeBucket.set_lifecycle)  # type: ignore[method-assign]
    S3Response.get_bucket_lifecycle = adjust_result(  # type: ignore[method-assign]
        S3Response.get_bucket_lifecycle, _with_object_sizes
    )
    notifications._send_event_bridge_message = _send_event_bridge_message(  # type: ignore[attr-defined]
        notifications._send_event_bridge_message  # type: ignore[attr-defined]
    )
