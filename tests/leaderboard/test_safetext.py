"""leaderboard/safetext.py, the one home of the rules for text that is stored and published: plain
names for identity fields, graded-code text cleaned (no host paths, no control characters,
capped), JSON that cannot break out of a <script>; and the places that must use it."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import lb_runfactory as rf
import pytest

from gpu2tpu.leaderboard import ingest
from gpu2tpu.leaderboard.ingest import submit
from gpu2tpu.leaderboard.safetext import (
    MAX_NAME,
    TEXT_LIMIT,
    UnsafeName,
    check_name,
    json_for_html,
    public_json,
    public_text,
)
from gpu2tpu.leaderboard.site import build_site

HOSTILE = ["m<!--<script>", "</script><script>alert(1)</script>", "a&b>c", "x\u2028y\u2029z",
           "/*DATA*/ /*JS*/", "\x1b[2J\x00\u202egnp.exe"]


@pytest.mark.parametrize("value", ["claude-sonnet-4-5", "org/model-1.5 (preview)", "Lab @ Uni: Team+1",
                                   "x" * MAX_NAME, "A.b_c-d"])
def test_good_names_pass_unchanged(value: str) -> None:
    assert check_name("model", value) == value
    assert check_name("organisation", value) == value


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [("model", "m<!--<script>", "'<'"), ("agent", "</script>", "'<'"),
     ("organisation", "Evil\u2028Corp", "U+2028"), ("model", "a\x1b[31m", "U+001B"),
     ("agent", "a/b", "'/'"), ("agent", "../up", "'.'"), ("agent", "two words", "' '"),
     ("model", "café", "'é'"), ("run_id", "a/../b", "'/'")],
)
def test_bad_names_are_refused_naming_field_character_and_rule(field: str, value: str, shown: str) -> None:
    with pytest.raises(UnsafeName) as err:
        check_name(field, value)
    message = str(err.value)
    assert message.startswith(field) and shown in message and "allowed: ASCII letters, digits" in message


@pytest.mark.parametrize(("value", "problem"), [("", "is empty"), ("x" * (MAX_NAME + 1), "characters long"),
                                                ("model ", "ends with a space"), (True, "quote it")])
def test_empty_long_padded_or_non_text_names_are_refused(value: object, problem: str) -> None:
    with pytest.raises(UnsafeName, match=problem):
        check_name("model", value)


def test_public_text_redacts_paths_and_controls_and_caps() -> None:
    crash = ("exit status 1: FileNotFoundError: [Errno 2] No such file or directory: "
             "'/home/alice/secret-project/data/train.pt'")
    assert public_text(crash).endswith("directory: '…/train.pt'")
    assert public_text('File "/usr/lib/python3.11/runpy.py", line 3') == 'File "…/runpy.py", line 3'
    assert public_text(r"C:\Users\bob\x.py and ~/keys/id_rsa and file:///srv/a/b.txt") == (
        "…/x.py and …/id_rsa and …/b.txt")
    # relative paths, ratios and URLs are not paths on this host
    kept = "loss 1.0/2.0, tokens/s, runs/demo/report.json, https://github.com/a/b"
    assert public_text(kept) == kept
    assert public_text("a\x1b[2Jb\x00c\u202ed\u2028e\r\nf\tg") == "a[2Jbcd e  f g"
    assert public_text("line 1\nline 2", multiline=True) == "line 1\nline 2"
    long = "Traceback: " + "x" * 1000 + " ValueError: the last line"
    cut = public_text(long)
    assert len(cut) == TEXT_LIMIT and cut.startswith("Traceback") and cut.endswith("the last line")
    assert public_json({"/home/u/k": ["/home/u/a/b", 1, None]}) == {"…/k": ["…/b", 1, None]}


@pytest.mark.parametrize("value", HOSTILE)
def test_json_for_html_leaves_nothing_that_ends_a_script(value: str) -> None:
    text = json_for_html({"model": value, "n": [value], "nan": float("nan")})
    assert not any(c in text for c in "<>&\u2028\u2029")
    assert json.loads(text) == {"model": value, "n": [value], "nan": None}


@pytest.fixture
def hostile_regrader(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-in regrader, with a crash message quoting a host path, markup and controls."""
    def regrade(report_path: Path, verified: object = None) -> dict:
        graded = rf.fake_regrade(report_path, verified)
        line = {"ok": False, "category": "crash",
                "text": "exit status 1: OSError: '/home/alice/x/ckpt.pt' <!--<script>\x1b[0m" + "y" * 500}
        graded["verdict"]["criteria"]["runs"]["evidence"].append(line)
        return graded

    monkeypatch.setattr(ingest, "regrade_graded", regrade)
    monkeypatch.setattr(ingest.submit, "__kwdefaults__", {"trust": ingest.VERIFIED})


@pytest.mark.usefixtures("hostile_regrader", "corpus_tasks")
def test_graded_text_is_stored_and_published_clean(tmp_path: Path) -> None:
    db = tmp_path / "lb.duckdb"
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp", exit_code=1)], run_id="run-a")
    submit(run, rf.write_metadata(tmp_path / "m.yaml"), db)
    trace = run / "agent-a" / "cifar_amp" / "trace.jsonl"  # what the site copies next to the page
    events = [json.loads(x) for x in trace.read_text().splitlines()]
    events[0]["cwd"] = "/home/alice/work/run"
    events[-1]["error"] = 'Traceback:\n  File "/home/alice/work/run/train.py", line 1\nOSError: bad\x07'
    trace.write_text("".join(json.dumps(e) + "\n" for e in events))
    con = duckdb.connect(str(db), read_only=True)
    texts = [r[0] for r in con.execute("SELECT text FROM evidence WHERE text LIKE 'exit%'").fetchall()]
    assert len(texts) == 1 and len(texts[0]) == TEXT_LIMIT
    assert "/home/alice" not in texts[0] and "\x1b" not in texts[0] and "'…/ckpt.pt'" in texts[0]
    site = tmp_path / "site"
    build_site(con, site, tmp_path / "runs")
    con.close()
    published = {p: p.read_text() for p in site.rglob("*") if p.is_file()}
    assert any(p.name == "trace.jsonl" for p in published)
    for path, text in published.items():
        assert "/home/alice" not in text and "\x07" not in text and "\x1b" not in text, path
    copied = next(t for p, t in published.items() if p.name == "trace.jsonl").splitlines()
    assert json.loads(copied[-1])["error"] == 'Traceback:\n  File "…/train.py", line 1\nOSError: bad'
