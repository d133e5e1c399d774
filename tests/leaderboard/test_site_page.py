"""What the page shows a new user (issue 42), in headless Chromium: no cost plot when every cost
is zero (said in words instead), cost labels inside the plot when there are costs, and the agents
x tasks grid labelled with its tasks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import lb_runfactory as rf
import pytest

from gpu2tpu.cli import main
from gpu2tpu.leaderboard.ingest import submit

pytestmark = pytest.mark.usefixtures("fake_regrader", "corpus_tasks")
TASKS = ("cifar_amp", "mnist_mlp", "akamaster__pytorch_resnet_cifar10")
# every text drawn on a canvas, in order (the grid is a canvas: its labels are not in the DOM)
RECORD_CANVAS_TEXT = """
window.__drawn = [];
const fillText = CanvasRenderingContext2D.prototype.fillText;
CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
  window.__drawn.push([this.canvas.id, String(text)]);
  return fillText.call(this, text, ...rest);
};
"""


def _site(tmp_path: Path, agent_cost: float, chip_seconds: float, target: str = "xla-cpu") -> Path:
    db = tmp_path / "lb.duckdb"
    for agent in ("agent-a", "agent-b"):
        evals = [rf.Eval(t, agent_cost_usd=agent_cost, chip_seconds=chip_seconds, target=target,
                         backend="cpu" if agent == "agent-b" and t == "mnist_mlp" else "xla")
                 for t in TASKS]
        run = rf.write_run(tmp_path / "runs", evals, agent=agent, run_id=f"run-{agent}")
        submit(run, rf.write_metadata(tmp_path / f"{agent}.yaml", agent=agent), db)
    assert main(["leaderboard", "site", "--to", str(tmp_path / "site"), "--db", str(db)]) == 0
    return tmp_path / "site"


def _open(browser: Any, site: Path) -> Any:  # noqa: F811
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.add_init_script(RECORD_CANVAS_TEXT)
    page.goto((site / "index.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    return page


def test_zero_costs_give_words_not_a_degenerate_plot(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    page = _open(browser, _site(tmp_path, agent_cost=0.0, chip_seconds=36.0))
    assert page.locator("#scatter-svg").count() == 0
    note = page.locator("#plot-scatter #scatter-none").inner_text()
    assert note.startswith("Every entry here cost $0 per task") and "no cost axis" in note
    assert "$0.0000" not in page.locator("body").inner_text()
    assert page.locator("#ranking td[data-key='usd_per_task']").all_inner_texts() == ["$0", "$0"]
    shot = Path(os.environ.get("GPU2TPU_SCREENSHOT_ZERO_COST") or tmp_path / "zero-cost.png")
    page.screenshot(path=str(shot), full_page=True)
    assert page.errors == []


def test_cost_labels_stay_inside_the_plot(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    page = _open(browser, _site(tmp_path, agent_cost=0.0123, chip_seconds=3600.0, target="tpu-v5e"))
    assert page.locator("#scatter-svg circle.point").count() == 2
    overflow = page.evaluate("""() => {
        const s = document.querySelector('#scatter-svg'), W = s.viewBox.baseVal.width;
        return [...s.querySelectorAll('text')].map((t) => t.getBBox())
            .filter((b) => b.x < 0 || b.x + b.width > W).length;
    }""")
    assert overflow == 0
    assert page.errors == []


def test_the_grid_names_its_tasks(browser: Any, tmp_path: Path) -> None:  # noqa: F811
    page = _open(browser, _site(tmp_path, agent_cost=0.0, chip_seconds=36.0))
    drawn = [text for canvas, text in page.evaluate("window.__drawn") if canvas == "grid-canvas"]
    assert set(TASKS) <= set(drawn) and {"agent-a", "agent-b"} <= set(drawn)
    assert drawn.index(TASKS[0]) < drawn.index("agent-a")  # the column labels head the grid
    canvas = page.locator("#grid-canvas")
    box = canvas.bounding_box()
    cell = (int(canvas.get_attribute("width")) - 154) / len(TASKS)  # L = 150, 4 to spare
    page.mouse.move(box["x"] + 150 + 1.5 * cell, box["y"] + 8)  # over the second column's label
    assert canvas.get_attribute("title") == sorted(TASKS)[1]
    shot = Path(os.environ.get("GPU2TPU_SCREENSHOT_GRID") or tmp_path / "grid.png")
    page.locator("#grid-section").screenshot(path=str(shot))
    assert page.errors == []
