"""The room's deployable stack (deploy/room): its secrets script makes files a real Mosquitto
with the shipped config and ACL accepts, and the compose file uses only files that exist,
restarts every service and keeps the edge's image free of the room's packages."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from edge.comms import MqttTransport
from tests.broker import Broker, Subscriber

ROOT = Path(__file__).resolve().parents[1]
ROOM = ROOT / "deploy" / "room"


def make_secrets(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOM / "make-secrets.sh"), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PAIGOW_SECRETS": str(out)},
    )


@pytest.fixture(scope="module")
def secrets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("secrets")
    made = make_secrets(out, "broker.example", "room.example")
    assert made.returncode == 0, made.stderr
    return out


def test_the_secrets_script_refuses_a_second_ca_and_a_bad_table_login(secrets: Path) -> None:
    again = make_secrets(secrets, "broker.example", "room.example")
    assert again.returncode == 2 and "already holds a CA" in again.stderr
    bad = make_secrets(secrets, "--table", "pgt-03")
    assert bad.returncode == 2 and "SITE/TABLE" in bad.stderr
    assert (secrets / "store_url").read_text().startswith("postgresql+psycopg://paigow:")


def test_a_broker_with_the_shipped_config_accepts_the_room_and_a_table(secrets: Path) -> None:
    table_password = make_secrets(secrets, "--table", "s1/t1").stdout.strip()
    assert len(table_password) == 48
    shipped = (ROOT / "deploy" / "mosquitto" / "mosquitto.conf").read_text()
    settings = [
        line.replace("/mosquitto/certs", str(secrets / "certs"))
        .replace("/mosquitto/config/passwd", str(secrets / "passwd"))
        .replace("/mosquitto/config/acl", str(ROOT / "deploy" / "mosquitto" / "acl"))
        for line in shipped.splitlines()
        if not line.startswith(("listener", "persistence", "log_dest", "per_listener"))
    ]
    broker = Broker(secrets, "\n".join(settings) + "\n").start()
    room = Subscriber(
        broker.port,
        "paigow/#",
        client_id="room-deploy",
        username="room",
        password=(secrets / "mqtt_room_password").read_text().strip(),
        ca=str(secrets / "certs" / "ca.crt"),
    )
    box = MqttTransport(
        host="localhost",  # the broker's certificate names it
        port=broker.port,
        client_id="edge-s1-t1",
        status_topic="paigow/s1/t1/status",
        username="s1/t1",
        password=table_password,
        ca_file=str(secrets / "certs" / "ca.crt"),
        command_topic="paigow/s1/t1/announce",
    )
    pit = MqttTransport(
        host="localhost",
        port=broker.port,
        client_id="pit-console",
        status_topic="paigow/pit/status",
        username="pit",
        password=(secrets / "mqtt_pit_password").read_text().strip(),
        ca_file=str(secrets / "certs" / "ca.crt"),
    )
    box.start()
    pit.start()
    try:
        assert box.wait_connected(10)
        mine = box.publish("paigow/s1/t1/alert", b'{"mine": true}')
        theirs = box.publish("paigow/s2/t1/alert", b'{"theirs": true}')
        forged = box.publish("paigow/room/ingest/workers/ingest-1", b"offline")
        acks = dict(box.acks.get(timeout=10) for _ in range(4))
        assert acks[mine] is None and acks[theirs] is not None and acks[forged] is not None
        assert room.wait_for(1, timeout=5, topic_end="/alert") == [{"mine": True}]
        # ingest workers announce themselves to each other (room/ingest.py: stand-ins)
        room.client.publish("paigow/room/ingest/workers/ingest-1", b"online", qos=1)
        assert room.wait_for(1, timeout=5, topic_end="/ingest-1") == [{"raw": "online"}]
        # the pit announces a table's next round; only that table's box hears it, and a box
        # cannot announce for itself or any other table
        assert pit.wait_connected(10)
        said = pit.publish("paigow/s1/t1/announce", b'{"by": "pit-1", "bank": "player"}')
        other = pit.publish("paigow/s1/t2/announce", b'{"by": "pit-1", "bank": "house"}')
        acks = dict(pit.acks.get(timeout=10) for _ in range(3))  # with its own status's
        assert acks[said] is None and acks[other] is None
        assert box.commands.get(timeout=10) == b'{"by": "pit-1", "bank": "player"}'
        forged = box.publish("paigow/s1/t1/announce", b'{"by": "me", "bank": "player"}')
        assert dict([box.acks.get(timeout=10)])[forged] is not None
        time.sleep(0.5)
        assert box.commands.empty()  # neither the other table's word nor its own forgery
    finally:
        pit.stop()
        box.stop()
        room.close()
        broker.stop()


def test_the_compose_stack_restarts_everything_and_uses_files_that_exist(secrets: Path) -> None:
    compose = yaml.safe_load((ROOM / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "mosquitto", "ingest-1", "ingest-2", "review"}
    for name, service in services.items():
        assert service["restart"] == "unless-stopped", name
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./secrets/"):
                assert (secrets / source.removeprefix("./secrets/")).exists(), source
            elif source.startswith("."):
                assert (ROOM / source).resolve().exists(), source
    for secret in compose["secrets"].values():
        assert (secrets / secret["file"].removeprefix("./secrets/")).is_file()
    ids = [services[w]["command"][services[w]["command"].index("--client-id") + 1]
           for w in ("ingest-1", "ingest-2")]  # fmt: skip
    assert len(set(ids)) == 2  # each worker its own persistent session
    review = services["review"]["command"]
    assert "--tls-cert" in review and "--plain-http" not in review


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "deploy/room/Dockerfile"])
def test_dockerfiles_are_clean_and_only_the_room_installs_its_extra(dockerfile: str) -> None:
    run = subprocess.run(
        ["hadolint", dockerfile], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0, run.stdout + run.stderr
    text = (ROOT / dockerfile).read_text()
    assert ('".[room]"' in text) == (dockerfile != "Dockerfile")
