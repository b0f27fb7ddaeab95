"""Scopes are declared, not remembered: the operations registry refuses an operation or a
resource whose scope is not one of accounts.caller.ALL_SCOPES.
"""

from __future__ import annotations

from typing import Any

import pytest

from memories.operations import registry

# --- the operations registry ------------------------------------------------------------------


def _handler(caller: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize("scope", ["memory:admin", "memory:Read", "", "memory:read memory:write"])
def test_it_refuses_to_register_an_operation_with_an_unknown_scope(scope):
    operation = registry.Operation(
        name="test_scopes_unknown",
        description="never registered",
        input_schema={"type": "object", "additionalProperties": False, "properties": {}},
        output_schema={"type": "object"},
        scope=scope,
        handler=_handler,
    )
    with pytest.raises(ValueError, match="unknown scope"):
        registry.register(operation)
    assert "test_scopes_unknown" not in {op.name for op in registry.operations()}


def test_it_refuses_to_register_a_resource_with_an_unknown_scope():
    resource = registry.ResourceDef(
        uri="graph://test-scopes",
        name="never registered",
        description="never registered",
        reader=lambda caller: {},
        scope="graph:read",
    )
    with pytest.raises(ValueError, match="unknown scope"):
        registry.register_resource(resource)
    assert "graph://test-scopes" not in {r.uri for r in registry.resources()}
