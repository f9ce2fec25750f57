"""Regenerate docs/review-board.png, docs/review-incident.png and docs/review-report.png: the review
UI as a reviewer sees it after `paigow demo`'s rounds.

    python3 scripts/review_pictures.py

A scratch SQLite store gets a simulated earlier shift (`room.shift`) and the two fixture rounds
followed as the demo follows them (`room.demo.follow_round`, the simulator's labels in place
of the models); the review UI is served on loopback and photographed by headless Chromium
(the same /usr/bin/chromium the browser tests use): the live board, the house-way incident of
the irregular round, and the shift report page. Every table but the last has its set enrolled
(`room.demo.enrol_tables`), so the board shows both.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from room.demo import demo_rounds, enrol_tables, follow_round  # noqa: E402
from room.shift import simulate_shift  # noqa: E402
from room.store import Store  # noqa: E402
from room.web import create_app  # noqa: E402
from tests.broker import free_port  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="review-") as scratch:
        store = Store.open(f"sqlite:///{Path(scratch) / 'room.sqlite'}")
        store.add_user("rita", "reviewer-pw", "reviewer")
        simulate_shift(store, tables=8, rounds=10, start=time.time() - 8 * 3600)
        rounds = demo_rounds(Path(scratch), print)
        names = [f"demo-{k + 1}" for k in range(len(rounds))]
        enrolled = enrol_tables(store, names[:-1], print)  # the last runs without: a warning
        for name, folder in zip(names, rounds, strict=True):
            follow_round(folder, store, 50.0, name, lambda line: None, enrolment=enrolled.get(name))
        app = create_app(store, "pictures-" + "x" * 24, secure_cookie=False)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
        threading.Thread(target=server.run, daemon=True).start()
        while not server.started:
            time.sleep(0.05)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--disable-gpu", "--window-size=1280,900"):  # fmt: skip
            options.add_argument(flag)
        service = Service("/usr/bin/chromedriver", env={**os.environ, "TMPDIR": scratch})
        browser = webdriver.Chrome(options=options, service=service)
        browser.implicitly_wait(5)
        try:
            url = f"http://127.0.0.1:{port}"
            browser.get(url + "/")
            browser.find_element(By.ID, "username").send_keys("rita")
            browser.find_element(By.ID, "password").send_keys("reviewer-pw")
            browser.find_element(By.ID, "login").click()
            browser.find_element(By.ID, "board")
            time.sleep(1.5)  # the tables' conditions and the live stream settle
            browser.save_screenshot(str(ROOT / "docs" / "review-board.png"))
            first = next(a for a in store.alerts(table="demo-1")
                         if a.kind == "wrong-first-position")  # fmt: skip
            browser.get(f"{url}/incidents/{first.id}")
            browser.find_element(By.ID, "summary")
            browser.save_screenshot(str(ROOT / "docs" / "review-incident.png"))
            browser.get(f"{url}/report")
            browser.find_element(By.ID, "report-title")
            browser.save_screenshot(str(ROOT / "docs" / "review-report.png"))
        finally:
            browser.quit()
            server.should_exit = True
    for name in ("board", "incident", "report"):
        print(ROOT / "docs" / f"review-{name}.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
