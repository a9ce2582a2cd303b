"""Each check of checks.py and checks_iam.py against both servers: the emulator answers as AWS
does, and plain moto 5.2.5 still does not (when it does, that wrap can go: test/README.md)."""

from __future__ import annotations

from typing import Any

import pytest
from checks import CHECKS
from checks_iam import IAM_CHECKS
from conftest import Aws

ALL_CHECKS = [*CHECKS, *IAM_CHECKS]


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_emulator_answers_as_aws(check: Any, emulator: Aws) -> None:
    check(emulator)


@pytest.mark.parametrize("check", ALL_CHECKS, ids=lambda c: c.__name__)
def test_plain_moto_still_differs(check: Any, plain_moto: Aws) -> None:
    with pytest.raises(AssertionError):
        check(plain_moto)
