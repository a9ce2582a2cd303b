"""The test AWS: moto's server, with a few narrow wraps so that it answers as AWS does.

Every test, benchmark and ``make dev`` talks to this server (test/support/moto.ts starts it with
the virtualenv's python that ``make tools`` installs moto 5.2.5 into)::

    .venv/bin/python test/support/aws-emulator/server.py -H 127.0.0.1 -p 5000

It takes moto_server's arguments and serves moto's API, ``/moto-api/reset`` included, with these
differences, each a wrap around moto's own function (never a copy of it) in ``wraps/``:

- S3 GetBucketNotificationConfiguration answers ``<EventBridgeConfiguration/>`` while a bucket
  sends its events to EventBridge (``wraps/s3.py``).
- S3 GetBucketLifecycleConfiguration answers a filter's ``ObjectSizeGreaterThan`` and
  ``ObjectSizeLessThan``, at the top of ``Filter`` and inside ``And`` (``wraps/s3.py``).
- S3 sends a bucket's "Object Created" events to the enabled rules of the default event bus as
  the S3 user guide documents them (``wraps/s3.py``).
- SQS GetQueueAttributes answers ``RedriveAllowPolicy``, by name and in ``All``
  (``wraps/sqs.py``).
- SQS SetQueueAttributes leaves a queue's ``Policy`` alone unless the call names it
  (``wraps/sqs.py``).
- EventBridge delivers the whole event, ``account`` included, to a target without an input
  transformer (``wraps/events.py``).
- EC2 sends "EC2 Instance State-change Notification" events to the enabled rules of the default
  event bus on RunInstances, StartInstances, StopInstances and TerminateInstances
  (``wraps/ec2.py``).
- EC2 MonitorInstances and UnmonitorInstances turn detailed monitoring on and off
  (``wraps/ec2.py``).
- EC2 keeps a burstable instance's CPU credit option from RunInstances, answers it in
  DescribeInstanceCreditSpecifications, changes it with ModifyInstanceCreditSpecification, and
  refuses one for any other instance type (``wraps/ec2.py``).

- With IAM enforcement on (``POST /moto-api/reset-auth``), every call is authorized by the actions
  AWS authorizes it by (S3 subresources, SQS batch calls, tagging at creation), SQS calls against
  the queue's ARN with its tag condition keys, conditions as AWS evaluates them (failing closed on
  the operators moto cannot evaluate), and refusals answered in EC2's and the JSON protocol's own
  shapes (``wraps/iam.py``).

One more change is in how moto serves, not in what it answers: it lists its own package folder
once instead of on every request (``serving.py``).

The wraps keep no state of their own: what they add lives in moto's backends, so moto's reset
clears it. They are written against one moto version, and the server refuses to start on any
other: a new moto may have fixed a difference (test/README.md says how to tell and how to drop a
wrap) or changed the functions a wrap relies on.
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

#: The moto release the wraps were written and tested against.
SUPPORTED_MOTO = "5.2.5"


def check_moto_version() -> None:
    """Exits with status 2 and a message unless the installed moto is :data:`SUPPORTED_MOTO`."""
    try:
        found = version("moto")
    except PackageNotFoundError:
        found = None
    if found != SUPPORTED_MOTO:
        sys.stderr.write(
            f"aws-emulator: moto {found or '(not installed)'} found; the wraps in "
            f"test/support/aws-emulator are written for moto {SUPPORTED_MOTO} only. Install it "
            f"with 'make tools', or check each wrap against the new moto (test/README.md) and "
            f"then change SUPPORTED_MOTO.\n"
        )
        sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    """Checks moto's version, installs the wraps and runs moto's server with ``argv``."""
    check_moto_version()
    import serving
    import wraps
    from moto.server import main as moto_main

    wraps.install()
    serving.install()
    moto_main(argv)


if __name__ == "__main__":
    main()
