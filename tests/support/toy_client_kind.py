"""A toy client-driver kind, declared in this one file and nowhere else (tests/test_kinds.py).

`toy-client` is the kafka-python driver under another name. It joins the shipped kinds only
through `KCONFORM_KINDS=toy_client_kind`.
"""

from __future__ import annotations

from kconform.fixtures.clients.driver import ClientDriver
from kconform.fixtures.clients.kind import ClientKind, ClientSpec


def _create(spec: ClientSpec) -> ClientDriver:
    from kconform.fixtures.clients.module_driver import PythonModuleDriver

    return PythonModuleDriver(spec.label, "kafka", "kconform.fixtures.clients.kafka_python_driver")


KIND = ClientKind(
    name="toy-client",
    syntax=("toy-client",),
    summary="the kafka-python driver under a toy name",
    create=_create,
    light=True,
)
