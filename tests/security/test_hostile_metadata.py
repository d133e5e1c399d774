"""A submitter who names their model `m<!--<script>` (or `</script><script>alert(1)</script>`) must
not break or script the public page. Ingest refuses such names, naming the field, the character
and what is allowed, and stores nothing (self-reported runs and verified bundles alike); the page
escapes whatever is in the store anyway: rendered in headless Chromium from a store holding such
text (written into it directly, as an older store could hold), every row shows and nothing runs."""

from __future__ import annotations

import io
import json
import sys
import tarfile
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "leaderboard"))
import lb_runfactory as rf  # noqa: E402
from lb_browser import browser, open_page  # noqa: E402,F401
from test_bundle import write_inputs  # noqa: E402

from gpu2tpu.cli import main  # noqa: E402
from gpu2tpu.leaderboard import bundle, ingest  # noqa: E402
from gpu2tpu.leaderboard.runfiles import SubmissionRefused  # noqa: E402
from gpu2tpu.leaderboard.safetext import json_for_html  # noqa: E402
from gpu2tpu.leaderboard.site import build_site  # noqa: E402

COMMENT = "m<!--<script>"  # makes the embedded JSON swallow the rest of the page
CLOSE = "</script><script>alert(1)</script>"
CRASH = "exit status 1: <!--<script> /*DATA*/ /*JS*/ </script><script>alert(2)</script> a&b"


@pytest.fixture(autouse=True)
def leaderboard_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As tests/leaderboard/conftest.py: a private store, the stand-in regrader, a one-task corpus."""
    from gpu2tpu.tasks import TASKS_DIR, finder

    monkeypatch.setenv("GPU2TPU_DB", str(tmp_path / "default.duckdb"))
    monkeypatch.setattr(ingest, "regrade_graded", rf.fake_regrade)
    monkeypatch.setattr(ingest.submit, "__kwdefaults__", {"trust": ingest.VERIFIED})  # made-up runs
    tasks = tmp_path / "corpus_tasks"
    (tasks / "cifar_amp").mkdir(parents=True)
    (tasks / "cifar_amp" / "task.yaml").write_text((TASKS_DIR / "cifar_amp" / "task.yaml").read_text())
    monkeypatch.setattr(finder, "TASKS_DIR", tasks)


def metadata(path: Path, **fields: Any) -> Path:
    entry = {"agent": "agent-a", "model": "model-x", "organisation": "Test Lab", **fields}
    path.write_text(yaml.safe_dump(entry))
    return path


def test_the_escaping_function_leaves_no_way_out_of_a_script() -> None:
    for value in (COMMENT, CLOSE, CRASH, "-->", "\u2028\u2029"):
        text = json_for_html({"model": value})
        assert not any(c in text for c in "<>&\u2028\u2029"), text
        assert json.loads(text) == {"model": value}


@pytest.mark.parametrize(
    ("field", "value", "char"),
    [("model", COMMENT, "'<'"), ("agent", CLOSE, "'<'"), ("organisation", "Evil\u2028Corp", "U+2028"),
     ("model", "m\x1b[2J", "U+001B"), ("organisation", "x" * 101, "101 characters")],
)
def test_self_reported_submit_refuses_and_stores_nothing(tmp_path: Path, field: str, value: str,
                                                          char: str, capsys) -> None:
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp")])
    meta = metadata(tmp_path / "meta.yaml", **{field: value})
    db = tmp_path / "lb.duckdb"
    with pytest.raises(SubmissionRefused) as err:
        ingest.submit(run, meta, db)
    assert field in str(err.value) and char in str(err.value) and "allowed:" in str(err.value)
    assert not db.exists()
    assert main(["submit", str(run), "--metadata", str(meta), "--db", str(db)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "nothing written" in lines[0] and field in lines[0]
    assert not db.exists()


def test_a_report_naming_a_hostile_model_is_refused(tmp_path: Path) -> None:
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp")], model=COMMENT)
    with pytest.raises(SubmissionRefused, match=r"report\.json: model 'm<!--<script>' holds '<'"):
        ingest.submit(run, metadata(tmp_path / "meta.yaml"), tmp_path / "lb.duckdb")
    assert not (tmp_path / "lb.duckdb").exists()


def test_good_names_are_stored_as_given(tmp_path: Path) -> None:
    run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp")], model="org/model-1.5 (preview)")
    meta = metadata(tmp_path / "meta.yaml", model="org/model-1.5 (preview)", organisation="Lab @ Uni: A+B")
    ingest.submit(run, meta, tmp_path / "lb.duckdb")
    con = duckdb.connect(str(tmp_path / "lb.duckdb"), read_only=True)
    assert con.execute("SELECT model, organisation FROM submissions").fetchall() == [
        ("org/model-1.5 (preview)", "Lab @ Uni: A+B")]
    con.close()


def _rebuild(good: Path, bad: Path, meta_model: str | None = None, pred_model: str | None = None) -> Path:
    """`good` with a hostile model in bundle.json's metadata or in a prediction line, the
    manifest's hashes kept consistent (a hand-made bundle passes the hash checks)."""
    with tarfile.open(good) as src:
        files = {m.name: src.extractfile(m).read() for m in src.getmembers() if m.isfile()}
    manifest = json.loads(files["bundle.json"])
    if meta_model:
        manifest["metadata"][0]["model"] = meta_model
    if pred_model:
        lines = [json.loads(x) for x in files["predictions.jsonl"].decode().splitlines()]
        lines[0]["model"] = pred_model
        files["predictions.jsonl"] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        manifest["sha256"]["predictions.jsonl"] = rf.hashlib.sha256(files["predictions.jsonl"]).hexdigest()
    files["bundle.json"] = json.dumps(manifest).encode()
    with tarfile.open(bad, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return bad


def test_verified_bundles_refuse_hostile_models_before_running_anything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_inputs(tmp_path)
    preds = tmp_path / "my preds.jsonl"
    good = tmp_path / "good.tar.gz"
    bundle.pack(preds, tmp_path / "meta.yaml", good)
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    lines[1]["model"] = CLOSE  # free text in the predictions file
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(SubmissionRefused, match=r"line 2: model .* holds '<'"):
        bundle.pack(preds, tmp_path / "meta.yaml", tmp_path / "bad.tar.gz")
    assert not (tmp_path / "bad.tar.gz").exists()

    import gpu2tpu.harness.evaluate as evaluate

    monkeypatch.setattr(evaluate, "evaluate_predictions", lambda *a, **k: pytest.fail("evaluated"))
    db = tmp_path / "lb.duckdb"
    for kind, bad in (("metadata", _rebuild(good, tmp_path / "m.tar.gz", meta_model=COMMENT)),
                      ("prediction", _rebuild(good, tmp_path / "p.tar.gz", pred_model=COMMENT))):
        with pytest.raises(SubmissionRefused, match="model 'm<!--<script>' holds '<'"):
            bundle.verify(bad, db)
        assert not db.exists(), kind


@pytest.fixture
def hostile_site(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Three agents submitted with plain names, then hostile text written straight into the store
    (bypassing ingest, as a store from before the checks could hold it)."""
    db = tmp_path / "lb.duckdb"
    for agent, model, trust in (("agent-a", "model-x", "verified"), ("agent-b", "model-y", "verified"),
                                ("agent-c", "model-z", "self-reported")):
        run = rf.write_run(tmp_path / "runs", [rf.Eval("cifar_amp", exit_code=1), rf.Eval("mnist")],
                           agent=agent, model=model, run_id=f"run-{agent}")
        ingest.submit(run, metadata(tmp_path / f"{agent}.yaml", agent=agent, model=model), db,
                      trust=trust)
    names = {"model-x": COMMENT, "model-y": CLOSE + "/*JS*/", "model-z": 'z"><img src=x onerror=alert(3)>'}
    con = duckdb.connect(str(db))
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.columns WHERE column_name = 'model'").fetchall()]
    for old, new in names.items():
        for table in tables:
            con.execute(f"UPDATE {table} SET model = $new WHERE model = $old", {"new": new, "old": old})
    con.execute("UPDATE evidence SET text = $t WHERE criterion = 'runs'", {"t": CRASH})
    site = tmp_path / "site"
    build_site(con, site)
    con.close()
    return site, names


def test_the_page_renders_every_row_of_a_hostile_store(browser: Any, hostile_site) -> None:  # noqa: F811
    site, names = hostile_site
    page = open_page(browser, site)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    assert page.locator("#ranking tbody tr").count() == 2  # verified
    page.select_option("#trust", "all")
    assert page.locator("#ranking tbody tr").count() == 3
    shown = page.locator("#ranking tbody td[data-key='model']").all_inner_texts()
    assert sorted(shown) == sorted(names.values())  # as text, not markup
    page.click("#ranking tr[data-agent='agent-a']")
    page.wait_for_selector("#evals tbody tr")
    assert page.locator("#evals tbody tr").count() == 2
    page.locator("#evals tbody tr").first.click()
    evidence = page.locator("#eval-detail .crit[data-criterion='runs'] li").all_inner_texts()
    # each line may open with its source's label (in-process, supervisor, static-scan)
    shown = [t.split(" ", 1)[1] if t.startswith(("in-process ", "supervisor ", "static-scan ")) else t
             for t in evidence]
    assert CRASH in shown, evidence
    assert page.locator("img").count() == 0 and dialogs == [] and page.errors == []
    html = (site / "index.html").read_text()
    data = html.split('<script id="lb-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert "<" not in data and len(json.loads(data)["agents"]) == 3  # the whole data block, parsed
