"""serving.py changes how moto serves, never what it answers: moto's module list is read once."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def test_module_list_is_moto_own_and_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from moto import backends

    listed = list(backends.list_of_moto_modules())
    import serving

    serving.install()
    assert list(backends.list_of_moto_modules()) == listed
    assert "s3" in listed and "sqs" in listed and "ec2" in listed

    def refuse(_path: str) -> list[str]:
        raise AssertionError("moto's package folder was listed again")

    monkeypatch.setattr(os, "listdir", refuse)
    assert list(backends.list_of_moto_modules()) == listed
    assert list(backends.list_of_moto_modules()) == listed
