"""The JSON Schema of every typed document the product reads or writes, into `docs/schemas/`.

python3 -m paigow.schemas [docs/schemas]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from edge.config import EdgeConfig
from edge.messages import Announce, Enrolment, Envelope, EvidenceClip, Health, Status
from vision.follow.records import Alert, RoundRecord
from vision.table import TableConfig

SCHEMAS: dict[str, type[BaseModel]] = {
    "alert": Alert,
    "round-record": RoundRecord,
    "table": TableConfig,
    "edge-config": EdgeConfig,
    "envelope": Envelope,
    "evidence": EvidenceClip,
    "status": Status,
    "health": Health,
    "announce": Announce,
    "enrolment": Enrolment,
}


def write_schemas(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in SCHEMAS.items():
        path = folder / f"{name}.schema.json"
        path.write_text(json.dumps(model.model_json_schema(), indent=2) + "\n")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_schemas(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(path)
