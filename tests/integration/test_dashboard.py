"""``tuner dashboard`` as a user meets it: the real server on 127.0.0.1 over experiments a real sweep made.

One finished sweep of instant trials, a copy of it under a hostile folder name, and a second sweep that runs
while the dashboard watches it and is then killed with SIGKILL (interrupted). Checked with HTTP requests and
in Debian's headless Chromium driven by Playwright, as a user clicks through it: filtered and sorted, a running
sweep's page seen to update in place (the reader's scroll kept), two sweeps ticked and compared, screenshots
kept under TUNER_SCREENSHOTS when set.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.instant import instant_space
from tests.integration.killing import kill_9_when
from tuner import experiment

pytestmark = pytest.mark.slow

HOSTILE = "<script>document.title='pwned'"  # a folder name can hold markup (no slash)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    """A dashboard running in its own process, as ``tuner dashboard`` starts it."""

    proc: subprocess.Popen
    url: str
    announced: list[str]

    def get(self, path: str, headers: dict | None = None) -> tuple[int, str, dict]:
        request = urllib.request.Request(self.url.rstrip("/") + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(), dict(error.headers)

    def rows(self) -> dict[str, dict]:
        return {row["name"]: row for row in json.loads(self.get("/api/experiments")[1])}

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def serve(*args: str) -> Served:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "dashboard", *args, "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    announced = [proc.stdout.readline(), proc.stdout.readline()]
    opened = next((line.split()[1] for line in announced if line.startswith("open ")), None)
    assert opened, (announced, proc.stderr.read() if proc.poll() is not None else "")
    return Served(proc, opened, announced)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """One real sweep, a copy of it under a hostile name, a sweep whose only trial crashed, and the dashboard
    over their storage."""
    from tuner.cli import main

    root = tmp_path_factory.mktemp("board")
    store = root / "store"
    store.mkdir()
    space = instant_space(root)
    try:
        main(["sweep", "--space", str(space), "--scheduler", "asha", "--searcher", "random", "--num-samples", "4",
              "--max-epochs", "3", "--storage-path", str(store), "--name", "done"])  # fmt: skip
    except SystemExit as exc:
        assert exc.code == 0
    shutil.copytree(store / "done", store / HOSTILE)
    crashing = instant_space(root, crash_at=1, name="crashing_space.py")
    with pytest.raises(SystemExit):  # its one trial fails before it reports: the sweep ends failed
        main(["sweep", "--space", str(crashing), "--scheduler", "fifo", "--searcher", "random", "--num-samples", "1",
              "--max-epochs", "2", "--storage-path", str(store), "--name", "broken"])  # fmt: skip
    served = serve(str(store))
    yield served, store, root
    served.stop()


def _shot(page, name: str, fallback: Path) -> None:
    """A full-page screenshot, kept under TUNER_SCREENSHOTS when set, and seen to hold a drawn page."""
    shots = Path(os.environ.get("TUNER_SCREENSHOTS", fallback))
    shots.mkdir(parents=True, exist_ok=True)
    png = page.screenshot(path=str(shots / f"{name}.png"), full_page=True)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000, name


def test_the_index_lists_each_sweep_with_its_state_fates_and_best(board):
    served, store, _ = board
    assert served.announced[0].startswith(f"tuner dashboard: 3 experiment(s) under {store}")
    assert served.url.startswith("http://127.0.0.1:") and "token" not in served.url
    rows = served.rows()
    done, record = rows["done"], experiment.load(str(store / "done"))
    assert done["state"] == "finished" and done["trials"] == 4 == len(record.trials)
    assert done["fates"] == record.fate_counts() and sum(done["fates"].values()) == 4
    assert done["best"] == pytest.approx(record.best_trial().best("loss", "min"))
    assert done["scheduler"] == "asha" and done["searcher"] == "random" and done["space"] == str(space_of(store))
    assert done["epochs"] == sum(t.epochs for t in record.trials) and done["started"] and done["wall_s"] > 0
    status, page, headers = served.get("/")
    assert status == 200 and headers["X-Frame-Options"] == "DENY"
    assert '<a href="/sweep/0/done">done</a>' in page and "<span class='state finished'>finished</span>" in page
    for fate, n in record.fate_counts().items():
        assert f"{n} {fate}" in page
    broken = rows["broken"]
    assert broken["state"] == "failed" and broken["trials"] == 1 and broken["best"] is None, broken
    status, page, _ = served.get("/sweep/0/broken")  # its report still drawn, saying what failed
    assert status == 200 and "<span class='state failed'>failed</span>" in page and "crash at epoch 1" in page


def space_of(store: Path) -> Path:
    return store.parent / "instant_space.py"


def test_a_name_from_an_experiment_is_shown_as_text_never_run(board):
    served, _, _ = board
    escaped = "&lt;script&gt;document.title=&#x27;pwned&#x27;"
    key = "/sweep/0/" + urllib.parse.quote(HOSTILE, safe="")
    for path in ("/", "/rows", key, "/compare?sweep=0/done&sweep=" + urllib.parse.quote("0/" + HOSTILE, safe="")):
        status, page, _ = served.get(path)
        assert status == 200, path
        assert "<script>document.title" not in page, path
        assert escaped in page, path
    assert served.rows()[HOSTILE]["state"] == "finished"


def test_a_path_outside_the_storages_is_refused(board):
    served, _, root = board
    (root / "secret.txt").write_text("not for the dashboard")
    host, port = urllib.parse.urlparse(served.url).netloc.split(":")
    for path in ("/sweep/0/../../secret.txt", "/sweep/0/..%2F..%2Fsecret.txt", "/sweep/..%2F../store",
                 "/sweep/0/%2E%2E/secret.txt", "/sweep/7/done", "/sweep/0/nothing-here"):  # fmt: skip
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        connection.request("GET", path)  # sent as written: no client tidies the dots away
        response = connection.getresponse()
        body = response.read().decode()
        connection.close()
        assert response.status in (403, 404), (path, response.status)
        assert "not for the dashboard" not in body


def test_only_this_machine_is_answered_on_loopback(board):
    served, _, _ = board
    status, body, _ = served.get("/", headers={"Host": "rebound.example.com"})
    assert status == 403 and "127.0.0.1" in body


def test_another_address_needs_the_token_it_printed(board):
    _, store, _ = board
    other = serve(str(store), "--host", "127.0.0.2")
    try:
        url = urllib.parse.urlparse(other.url)
        token = urllib.parse.parse_qs(url.query)["token"][0]
        assert url.netloc.startswith("127.0.0.2:") and len(token) >= 32
        assert other.announced[0].startswith("tuner dashboard: ") and "experiment(s) under" in other.announced[0]
        base = f"http://{url.netloc}"
        bare = Served(other.proc, base + "/", [])
        for path in ("/", "/api/experiments", "/sweep/0/done", "/static/plotly.js"):
            assert bare.get(path)[0] == 403, path
            assert bare.get(path + ("&" if "?" in path else "?") + "token=wrong")[0] == 403, path
        status, page, headers = bare.get(f"/?token={token}")
        assert status == 200 and "/sweep/0/done" in page
        cookie = headers["Set-Cookie"].split(";")[0]
        assert "HttpOnly" in headers["Set-Cookie"] and cookie.endswith(token)
        assert bare.get("/api/experiments", headers={"Cookie": cookie})[0] == 200
        assert bare.get("/sweep/0/done", headers={"Authorization": f"token {token}"})[0] == 200
    finally:
        other.stop()


def test_a_sweep_appears_while_it_runs_its_page_follows_it_and_a_killed_one_reads_interrupted(
    board, browser, tmp_path
):
    served, store, root = board
    slow = instant_space(root, sleep=0.4, name="slow_space.py")
    seen: dict[str, object] = {}
    tab = browser.new_page(viewport={"width": 1400, "height": 700}) if browser else None

    def followed() -> bool:
        """The new sweep is listed as running, its page's content changed since it was first drawn, and a
        browser left on the page, scrolled down, swapped the new content in without reloading or moving."""
        row = served.rows().get("live")
        if not row or row["state"] != "running" or row["epochs"] < 2:
            return False
        if "version" not in seen:
            status, page, _ = served.get("/sweep/0/live")
            assert status == 200 and "<span class='state running'>running</span>" in page
            seen["version"] = json.loads(page.split("id=board-settings>")[1].split("</script>")[0])["version"]
            seen["row"] = row
            if tab is not None:
                tab.goto(served.url + "sweep/0/live")
                tab.wait_for_selector("#report .main-svg")  # plotly drew the report's figures
                tab.evaluate("window.scrollTo(0, 600)")
                seen["scrolled"] = tab.evaluate("window.scrollY")
            return False
        if "update" not in seen:
            status, text, _ = served.get(f"/sweep/0/live/update?version={seen['version']}")
            if status == 204:
                return False
            seen["update"] = json.loads(text)
        if tab is None:
            return True
        # the page asks every few seconds; the sweep is killed once it swapped, or after half a minute
        tab.wait_for_function("Number(document.getElementById('report').dataset.swaps) > 0", timeout=30_000)
        seen["swaps"] = tab.evaluate("Number(document.getElementById('report').dataset.swaps)")
        seen["after"] = tab.evaluate("window.scrollY")
        return True

    kill_9_when(["sweep", "--space", str(slow), "--scheduler", "fifo", "--searcher", "random", "--num-samples", "2",
                 "--max-epochs", "100", "--storage-path", str(store), "--name", "live"], followed)  # fmt: skip
    update = seen["update"]
    assert update["running"] is True and update["version"] != seen["version"]
    assert 'id="fates"' in update["html"] and "<body>" not in update["html"]  # the report's content alone
    row = served.rows()["live"]
    assert row["state"] == "interrupted", row
    assert row["epochs"] >= seen["row"]["epochs"]
    status, page, _ = served.get("/sweep/0/live")
    assert f"tuner resume {store / 'live'}</code>" in page and f"tuner tensorboard {store / 'live'}" in page
    assert '"running": false' in page
    if tab is None:
        return
    assert seen["swaps"] > 0 and seen["scrolled"] > 0 and seen["after"] == seen["scrolled"], seen
    _shot(tab, "sweep-live", tmp_path)

    # two sweeps ticked on the index and compared: one chart, and what differs between them marked
    tab.goto(served.url)
    tab.once("dialog", lambda dialog: (seen.setdefault("alert", dialog.message), dialog.dismiss()))
    tab.check('tr[data-name="done"] input[name=sweep]')
    tab.click("#compare")  # one ticked: the page says what it needs
    assert "two or more" in str(seen.get("alert")), seen
    tab.check('tr[data-name="live"] input[name=sweep]')
    tab.click("#compare")
    tab.wait_for_url("**/compare?**")
    tab.wait_for_selector("#chart .main-svg")
    assert tab.title() == "Comparing live, done"  # in the index's order: the newest first
    differing = tab.locator("tr.differs td:first-child").all_inner_texts()
    assert "scheduler" in differing and "num_samples" in differing, differing
    heads = tab.locator("h2:has-text('Each sweep') + div th").all_inner_texts()  # words, not the CSV's keys
    assert {"best loss", "epochs trained", "wall time (s)"} <= set(heads), heads
    assert tab.locator("#chart .legendtext").all_text_contents()[:2] == ["live (fifo, random)", "done (asha, random)"]
    _shot(tab, "compare", tmp_path)
    tab.close()


def test_in_a_browser_the_index_filters_sorts_and_a_sweep_shows_its_report(board, browser, tmp_path):
    if browser is None:
        pytest.skip("needs Debian's chromium")
    served, _, _ = board
    tab = browser.new_page(viewport={"width": 1400, "height": 900})
    tab.goto(served.url)
    assert "pwned" not in tab.title()  # the hostile name is text on the page, never a script
    listed = tab.locator("#sweeps tbody tr").count()
    tab.fill("#name-filter", "don")
    tab.select_option("#state-filter", "finished")
    assert tab.inner_text("#count") == f"1 of {listed} experiments"
    assert tab.locator("#sweeps tbody tr:visible").evaluate_all("rows => rows.map(r => r.dataset.name)") == ["done"]
    tab.click('th[data-column="epochs"]')
    tab.click('th[data-column="epochs"]')  # again: the other way
    assert tab.get_attribute('th[data-column="epochs"]', "class") == "sorted-down"
    assert "q=don&state=finished&sort=epochs&order=desc" in tab.url  # a link to this view shows the same
    tab.fill("#name-filter", "")
    tab.select_option("#state-filter", "")
    epochs = [int(t) for t in tab.locator("#sweeps tbody td.epochs").all_inner_texts()]
    assert epochs == sorted(epochs, reverse=True) and len(epochs) == listed
    _shot(tab, "index", tmp_path)
    tab.click('a[href="/sweep/0/done"]')
    tab.wait_for_selector("#report .main-svg")  # plotly drew the figures in the browser
    assert "done: 4 trials, loss (lowest is best)" in tab.inner_text("#report")
    _shot(tab, "sweep", tmp_path)
    tab.close()


def test_a_bucket_is_listed_and_served_as_a_folder_is(board):
    """Experiments under a bucket URI (moto's S3 API on 127.0.0.1), read as the local ones are."""
    import pyarrow.fs

    from tests.bucket import bucket_behind_proxy
    from tuner import storage

    _, store, _ = board
    with bucket_behind_proxy():
        fs, path = storage.filesystem("s3://sweeps/team")
        pyarrow.fs.copy_files(str(store / "done"), f"{path}/done", destination_filesystem=fs)
        remote = serve("s3://sweeps/team")
        try:
            assert remote.announced[0].startswith("tuner dashboard: 1 experiment(s) under s3://sweeps/team")
            row = remote.rows()["done"]
            local = experiment.load(str(store / "done"))
            assert row["state"] == "finished" and row["trials"] == 4 and row["fates"] == local.fate_counts()
            status, page, _ = remote.get("/sweep/0/done")
            assert status == 200 and "done: 4 trials, loss (lowest is best)" in page
            assert "tuner results s3://sweeps/team/done</code>" in page
            assert "tuner tensorboard" not in page  # TensorBoard reads a local folder only
        finally:
            remote.stop()


def test_a_sweeps_page_draws_from_the_reading_the_index_made_while_nothing_changed(board, monkeypatch):
    """A large sweep takes seconds to read: its page, asked after the index, does not read it again; once it
    changed, it does."""
    from tuner.review.board.catalog import Catalog
    from tuner.review.board.reports import Reports

    _, store, _ = board
    catalog = Catalog([str(store)])
    sweep = next(row.sweep for row in catalog.rows() if row.sweep.name == "done")
    reads = []
    real_load = experiment.load
    monkeypatch.setattr(experiment, "load", lambda *a, **k: reads.append(a[0]) or real_load(*a, **k))
    drawn = Reports(catalog).current(sweep)
    assert reads == [] and "done: 4 trials" in drawn.report
    result = next((store / "done").glob("*/result.json"))
    result.write_text(result.read_text())  # the same lines, written again: a new time, a new signature
    os.utime(result, ns=(result.stat().st_atime_ns, result.stat().st_mtime_ns + 10**9))
    Reports(catalog).current(sweep)
    assert reads == [sweep.folder]
