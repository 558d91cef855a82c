"""``tuner dashboard`` before it serves: bad input in one line, the token rule, and a start-up that stays light."""

from __future__ import annotations

import socket
import subprocess
import sys

from tuner.review.board import access


def test_a_storage_that_does_not_exist_is_one_line_and_exit_2(run_cli, tmp_path):
    result = run_cli("dashboard", tmp_path / "nowhere")
    assert result.code == 2
    assert result.err.strip() == f"tuner: error: storage {tmp_path / 'nowhere'} does not exist; pass a folder or bucket URI that holds experiments"
    (tmp_path / "a-file").write_text("x")
    result = run_cli("dashboard", tmp_path / "a-file")
    assert result.code == 2 and "is a file, not a folder" in result.err and len(result.err.strip().splitlines()) == 1


def test_a_port_in_use_is_one_line_and_exit_2(run_cli, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli("dashboard", tmp_path, "--port", port)
    assert result.code == 2
    assert result.err.startswith(f"tuner: error: port {port} on 127.0.0.1 is in use") and result.err.count("\n") == 1
    # a host that is no address of this machine is not blamed on the port: another machine's address (a
    # documentation-only one), and a name that resolves to nothing (its lookup stood in for: no DNS in tests)
    result = run_cli("dashboard", tmp_path, "--host", "203.0.113.7", "--port", port)
    assert result.err.startswith("tuner: error: --host 203.0.113.7: not an address this machine can listen on (")


def test_a_host_name_that_resolves_to_nothing_is_named_not_the_port(run_cli, tmp_path, monkeypatch):
    def unknown(self, address):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket.socket, "bind", unknown)
    result = run_cli("dashboard", tmp_path, "--host", "dashboard.invalid", "--port", 8080)
    assert result.code == 2 and result.err.strip() == (
        "tuner: error: --host dashboard.invalid: not an address this machine can listen on (Name or service not known)"
    )


def test_only_127_0_0_1_goes_without_a_token():
    assert not access.needs_token("127.0.0.1")
    assert all(access.needs_token(host) for host in ("0.0.0.0", "127.0.0.2", "localhost", "::", "10.1.2.3"))
    token = access.new_token()
    assert len(token) >= 32 and token != access.new_token()
    assert access.url("0.0.0.0", 8080, token) == f"http://0.0.0.0:8080/?token={token}"
    assert access.url("::", 8080, None) == "http://[::]:8080/"


def test_a_request_is_let_in_by_the_right_token_wherever_it_carries_it():
    token = access.new_token()
    assert access.allowed(None, None)
    wrong = token[:-1] + ("y" if token.endswith("x") else "x")  # one character off, whatever the last one is
    assert not access.allowed(token, None) and not access.allowed(token, wrong)
    assert access.allowed(token, access.given_token(token, None, None))
    assert access.allowed(token, access.given_token(None, token, None))
    assert access.allowed(token, access.given_token(None, None, f"token {token}"))
    assert not access.allowed(token, access.given_token("wrong", token, None))  # a wrong one in the URL wins


def test_on_loopback_a_request_must_name_this_machine():
    assert access.local_host_header("127.0.0.1:8080") and access.local_host_header("localhost:8080")
    assert access.local_host_header("localhost")
    assert not access.local_host_header("evil.example:8080") and not access.local_host_header(None)


def test_help_and_the_command_list_import_no_server_library():
    code = (
        "import sys; from tuner.cli import main\n"
        "for args in (['--help'], ['dashboard', '--help']):\n"
        "    try: main(args)\n"
        "    except SystemExit as exc: assert exc.code == 0, exc.code\n"
        "heavy = [m for m in ('aiohttp', 'ray', 'torch', 'plotly') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "dashboard" in proc.stdout and "[STORAGE]..." in proc.stdout


def _record(tmp_path, *trials, summary: bool = True):
    """An experiment as the reader gives it: trials with their status, fate and results."""
    from tuner.experiment import ExperimentRecord, TrialRecord
    from tuner.folder.names import BEST_FILE
    from tuner.settings import SweepConfig

    tmp_path.mkdir()
    if summary:
        (tmp_path / BEST_FILE).write_text("{}")
    made = [
        TrialRecord(f"t{i}", str(tmp_path / f"t{i}"), status, {}, rows, fate=fate)
        for i, (status, fate, rows) in enumerate(trials)
    ]
    return ExperimentRecord(str(tmp_path), SweepConfig(space="instant"), made)


def test_the_state_of_a_sweep_is_read_off_its_trials_its_summary_and_its_claim(tmp_path):
    from tuner.review.board.catalog import state_of

    ran = ("TERMINATED", "ran to max epochs (3)", [{"training_iteration": "3", "loss": "0.5"}])
    crashed = ("ERROR", "errored: RuntimeError: boom", [])
    open_trial = ("RUNNING", "unfinished", [{"training_iteration": "1", "loss": "0.9"}])
    assert state_of(_record(tmp_path / "a", ran, crashed), running=True) == "running"
    assert state_of(_record(tmp_path / "b", ran, crashed), running=False) == "finished"
    assert state_of(_record(tmp_path / "c", ran, open_trial), running=False) == "interrupted"
    assert state_of(_record(tmp_path / "d", ran, summary=False), running=False) == "interrupted"
    assert state_of(_record(tmp_path / "e", crashed, crashed), running=False) == "failed"


def test_the_index_sorts_best_first_within_each_metric_whatever_its_direction():
    """Sorting by the raw best value put the worst accuracy first, and accuracies among losses."""
    import re

    from tuner.review.board.catalog import Row, Sweep
    from tuner.review.board.index_page import row_html

    def cell(metric, mode, best):
        html = row_html(Row(Sweep(f"0/{best}", str(best), "/x"), "finished", metric=metric, mode=mode, best=best))
        return re.search(r'<td class="best" data-sort="([^"]*)" data-group="([^"]*)">.*?\((\w+) is best\)', html).groups()

    assert cell("loss", "min", 0.085) == ("0.085", "loss", "lowest")
    assert cell("mean_accuracy", "max", 0.945) == ("-0.945", "mean_accuracy", "highest")  # 0.945 before 0.92
    assert float(cell("mean_accuracy", "max", 0.945)[0]) < float(cell("mean_accuracy", "max", 0.92)[0])


def test_an_experiment_that_cannot_be_read_is_listed_with_why_beside_the_others(tmp_path):
    from tuner.folder.names import CONFIG_FILE
    from tuner.review.board.catalog import Catalog
    from tuner.review.board.index_page import rows_html

    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / CONFIG_FILE).write_text("space: [unclosed\n")
    (tmp_path / "not-an-experiment").mkdir()
    rows = Catalog([str(tmp_path)]).rows()
    assert [(r.sweep.key, r.sweep.name, r.state) for r in rows] == [("0/broken", "broken", "unreadable")]
    assert rows[0].problem and "unreadable" in rows_html(rows)


def test_the_grow_command_a_sweep_page_offers_is_one_resume_takes():
    """An interrupted sweep that had made 2 of its 6 trials was offered '--num-samples 4', which resume refuses
    (not more than the 6 it plans); a grid's or PBT's sweep cannot grow at all."""
    from tuner.review.board.catalog import FINISHED, INTERRUPTED, Row, Sweep
    from tuner.review.board.sweep_page import commands

    sweep = Sweep("0/s", "s", "/runs/s")
    made_two = dict(commands(Row(sweep, INTERRUPTED, trials=2, planned=6)))
    assert made_two["grow it to 12 trials (the searcher keeps all it learnt)"] == "tuner resume /runs/s --num-samples 12"
    assert "tuner resume /runs/s --num-samples 8" in commands(Row(sweep, FINISHED, trials=4, planned=None))[0]
    assert not any("--num-samples" in c for _, c in commands(Row(sweep, FINISHED, trials=4, planned=4, grows=False)))
