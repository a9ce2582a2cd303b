"""What the emulator changes in how moto serves, never in what it answers.

moto's dispatcher (``DomainDispatcherApplication.get_backend_for_host``) asks, for every request,
whether the host names one of moto's service modules, and ``moto.backends.list_of_moto_modules``
answers by listing moto's package folder and testing each of its 170-odd entries with
``os.path.isdir``: a fifth of the CPU time moto spends on a steady S3 or SQS read. The folder does
not change while the server runs, so :func:`install` lists it once and answers every later call
from that list.
"""

from __future__ import annotations

from collections.abc import Iterable

from moto import backends

_installed = False


def install() -> None:
    """Makes ``moto.backends.list_of_moto_modules`` answer from one listing (idempotent)."""
    global _installed
    if _installed:
        return
    listing = tuple(backends.list_of_moto_modules())

    def list_of_moto_modules() -> Iterable[str]:
        return iter(listing)

    backends.list_of_moto_modules = list_of_moto_modules
    _installed = True
