"""The peer `gym-contract validate` is measured against, as a user would write it: orjson + jsonschema_rs.

    python tools/peer_validate.py ROLLOUTS.jsonl

Reads the file line by line, parses each line with orjson and checks each attachment with
jsonschema_rs against the bundled schemas; prints how many attachments break their schema. No
semantic rule, no summary, no coverage: the floor a schema check alone costs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema_rs
import orjson

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas" / "v1"
BASE = "https://gym-contract.dev/schemas/v1/"
ATTACHMENTS = {
    "ng_trajectory": "trajectory.schema.json",
    "ng_agent_observations": "agent_observations.schema.json",
    "ng_model_call_capture": "model_call_record.schema.json#/$defs/ModelCallCapture",
}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    documents = [json.loads(path.read_text()) for path in sorted(SCHEMAS.glob("*.schema.json"))]
    registry = jsonschema_rs.Registry([(document["$id"], document) for document in documents])
    validators = {
        key: jsonschema_rs.validator_for({"$ref": BASE + target}, registry=registry)
        for key, target in ATTACHMENTS.items()
    }
    invalid = 0
    with open(argv[0], "rb") as lines:
        for line in lines:
            if not line.strip():
                continue
            record = orjson.loads(line)
            for key, validator in validators.items():
                value = record.get(key)
                if value is not None and not validator.is_valid(value):
                    invalid += 1
    print(f"{invalid} attachments break their schema")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
