#!/usr/bin/env python3
"""Which instances a tool's outputSchema accepts, checked as the Python MCP SDK 2.x checks a
structuredContent (`validator_for(schema)`, `check_schema`, `iter_errors`): for the tests that
show a schema refuses the wrong shapes, so the clients' validation of the right ones means
something. Run it with target/clients/py2/bin/python.

    schema_check.py < {"schema": {...}, "instances": [...]}
        -> [true, false, ...]   (one per instance: whether the schema accepts it)
"""

from __future__ import annotations

import json
import sys

from jsonschema.validators import validator_for

request = json.load(sys.stdin)
schema = request["schema"]
validator_cls = validator_for(schema)
validator_cls.check_schema(schema)
validator = validator_cls(schema)
print(json.dumps([not any(validator.iter_errors(i)) for i in request["instances"]]))
