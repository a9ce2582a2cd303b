"""The wraps that make moto answer as AWS does; :func:`install` applies them all, once.

Each module names the moto function it wraps and the AWS reference it follows; test/README.md
lists them, with how to drop one when moto is fixed.
"""

from __future__ import annotations

from . import ec2, events, iam, s3, sqs

_installed = False


def install() -> None:
    """Applies every wrap to the imported moto (idempotent)."""
    global _installed
    if _installed:
        return
    s3.install()
    sqs.install()
    events.install()
    ec2.install()
    iam.install()
    _installed = True
