"""Two servers for the wraps' tests: the emulator (server.py) and plain moto, each on a free
loopback port, started once per session and reset (``POST /moto-api/reset``) before each test.
Clients are boto3's, with moto's test credentials, in us-east-1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

SERVER = Path(__file__).resolve().parent.parent / "server.py"
REGION = "us-east-1"
START_TIMEOUT_S = 120


class Aws:
    """boto3 clients for one server, with moto's test credentials or an IAM user's access key."""

    def __init__(self, endpoint: str, access_key: tuple[str, str] = ("testing", "testing")) -> None:
        self.endpoint = endpoint
        options = {
            "endpoint_url": endpoint,
            "region_name": REGION,
            "aws_access_key_id": access_key[0],
            "aws_secret_access_key": access_key[1],
        }
        self.s3 = boto3.client("s3", **options)
        self.sqs = boto3.client("sqs", **options)
        self.events = boto3.client("events", **options)
        self.ec2 = boto3.client("ec2", **options)
        self.iam = boto3.client("iam", **options)
        self.sts = boto3.client("sts", **options)
        self.tagging = boto3.client("resourcegroupstaggingapi", **options)

    def as_identity(self, access_key: tuple[str, str]) -> "Aws":
        """Clients of the same server signing with ``access_key``."""
        return Aws(self.endpoint, access_key)

    def enforce_iam(self, on: bool) -> None:
        """Turns moto's IAM enforcement on (signatures and identity policies checked) or off."""
        request = urllib.request.Request(
            f"{self.endpoint}/moto-api/reset-auth",
            data=b"0" if on else b"inf",
            headers={"content-type": "text/plain"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200

    def reset(self) -> None:
        self.enforce_iam(False)
        request = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 200


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(name: str, command: list[str]) -> Iterator[Aws]:
    port = _free_port()
    log = tempfile.NamedTemporaryFile(prefix=f"aws-emulator-{name}-", suffix=".log", delete=False)
    env = {**os.environ, "MOTO_PORT": str(port)}
    proc = subprocess.Popen(
        [*command, "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT, env=env
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}: {Path(log.name).read_text()}")
            try:
                with urllib.request.urlopen(f"{endpoint}/moto-api/data.json", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not answer within {START_TIMEOUT_S} s") from None
                time.sleep(0.1)
        yield Aws(endpoint)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        os.unlink(log.name)


@pytest.fixture(scope="session")
def emulator_server() -> Iterator[Aws]:
    yield from _serve("emulator", [sys.executable, str(SERVER)])


@pytest.fixture(scope="session")
def plain_moto_server() -> Iterator[Aws]:
    yield from _serve("moto", [sys.executable, "-m", "moto.server"])


@pytest.fixture
def emulator(emulator_server: Aws) -> Aws:
    emulator_server.reset()
    return emulator_server


@pytest.fixture
def plain_moto(plain_moto_server: Aws) -> Aws:
    plain_moto_server.reset()
    return plain_moto_server
