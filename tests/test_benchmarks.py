"""Every script in benchmarks/ runs at its tiny size (`--tiny`) so none can rot: each exits 0 and
prints the lines it is meant to print, with well-formed numbers (finite; positive where they
measure something). Never whether a benchmark meets its target: the machine may be busy.

The two that train real models on the XLA CPU device (harness_overhead, validity_margins) share
one reference cache, so charlm's references are built once (1.5-2 minutes, then under a minute)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.bench

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
N = r"([-+]?(?:inf|nan|\d[\d,]*(?:\.\d*)?(?:e[-+]?\d+)?))"  # one printed number, captured
CHROMIUM = os.environ.get("GPU2TPU_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def bench_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test session's reference cache (tests/conftest.py: in tmp, never the user's), so a
    benchmark on a practice task reuses the references the practice suite built."""
    return Path(os.environ.get("GPU2TPU_CACHE") or tmp_path_factory.mktemp("bench-cache"))


def run_bench(script: str, *args: str, tmp: Path, cache: Path, timeout: float = 300) -> str:
    """Run benchmarks/`script` in a fresh directory under tmp; its stdout (exit 0 asserted)."""
    cwd = tmp / "cwd"
    cwd.mkdir()
    env = {**os.environ, "GPU2TPU_CACHE": str(cache), "GPU2TPU_DB": str(tmp / "default.duckdb")}
    proc = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (f"{script} {' '.join(args)} exited {proc.returncode}\n"
                                  f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}")
    return proc.stdout


def numbers(pattern: str, out: str) -> list[float]:
    """The numbers the first line matching `pattern` captures (each finite)."""
    match = re.search(pattern, out, re.MULTILINE)
    assert match, f"no line matching {pattern!r} in:\n{out}"
    values = [float(group.replace(",", "")) for group in match.groups()]
    assert all(math.isfinite(v) for v in values), (match.group(0), values)
    return values


def positive(values: list[float]) -> None:
    assert all(v > 0 for v in values), values


def non_negative(values: list[float]) -> None:
    assert all(v >= 0 for v in values), values


def test_leaderboard_bench(tmp_path: Path, bench_cache: Path) -> None:
    from gpu2tpu.leaderboard.queries import VIEWS

    out = run_bench("leaderboard_bench.py", "--tiny", tmp=tmp_path, cache=bench_cache)
    positive(numbers(rf"^rows: {N} evaluations +\({N} agents, {N} tasks\)", out))
    rate, _load_s = numbers(rf"^ingest: {N} rows/s into DuckDB via Arrow \({N} s load", out)
    positive([rate])
    views = re.findall(rf"^view (\w+) +first +{N} ms +median +{N} ms +\({N} rows\)", out, re.MULTILINE)
    assert sorted(v[0] for v in views) == sorted(VIEWS), out
    for _, first, median, _rows in views:
        positive([float(first), float(median)])
    positive(numbers(rf"^slowest view median: {N} ms \(goal < 200 ms\)", out))
    export_s, exported, load_s, view_ms = numbers(rf"^export: {N} s \({N} rows to parquet\); --from "
                                                  rf"load {N} s; agents view from export {N} ms", out)
    non_negative([export_s, load_s])  # two decimals: 0.00 s is possible at this size
    positive([exported, view_ms])
    # the last step: one submit's transaction through ingest._write (its signature broke it once)
    evidence, rows, ms = numbers(rf"^incremental submit of 50 evaluations \({N} evidence lines\) into the "
                                 rf"{N}-row store: {N} ms", out)
    positive([evidence, ms])
    assert rows == 2000


def test_site_bench(tmp_path: Path, bench_cache: Path) -> None:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium (or set GPU2TPU_CHROMIUM)")
    out = run_bench("site_bench.py", "--tiny", "--chromium", CHROMIUM, tmp=tmp_path, cache=bench_cache)
    positive(numbers(rf"^store: {N} evaluations, {N} evidence lines", out))
    non_negative(numbers(rf"^build_site: {N} s", out))  # 0.00 s is possible at this size
    positive(numbers(rf"^index.html: {N} kB raw, {N} kB gzip", out))
    files, median, most, raw, strings_raw, strings_gz, folder, folder_gz = numbers(
        rf"^details/: {N} agent files, gzip median {N} kB, max {N} kB per agent \(raw median {N} kB\); "
        rf"strings.js {N} kB raw, {N} kB gzip; folder {N} kB raw, {N} kB gzip", out)
    positive([files, median, raw, strings_raw, strings_gz, folder, folder_gz])
    assert files == 5 and median <= most and folder_gz <= folder
    fcp = numbers(rf"^chromium: first contentful paint {N} ms, everything drawn {N} ms after "
                  rf"navigation; one agent's drill-down {N} ms", out)
    positive(fcp)
    # each goal at the full size, extrapolated from the tiny one and labelled so
    scaled = "extrapolated linearly from 5 x 4 x 2 to 200 x 160 x 5"
    agent_kb, = numbers(rf"^goal: one agent's details \(a<N>.js max \+ strings.js\) <= 200 kB gzip: "
                        rf"{N} kB \({scaled}\): (?:holds|MISSED)$", out)
    # both sizes are printed to 0.1 kB, so their sum x100 is known to within 10 kB
    assert agent_kb == pytest.approx((most + strings_gz) * 100, abs=10.1)
    folder_mb, = numbers(rf"^goal: details/ <= 50 MB: {N} MB \({scaled}\): (?:holds|MISSED)$", out)
    assert folder_mb == pytest.approx(folder / 1e3 * 4000, rel=0.02)
    paint = numbers(rf"^goal: first contentful paint < 1000 ms: {N} ms \(measured at 5 x 4 x 2\)", out)
    assert paint == pytest.approx(fcp[:1], abs=0.5)


def test_omp_wait_policy(tmp_path: Path, bench_cache: Path) -> None:
    out = run_bench("omp_wait_policy.py", "--tiny", tmp=tmp_path, cache=bench_cache)
    for policy in ("default", "PASSIVE"):
        # alone wall, alone CPU, loaded wall, loaded CPU, and the two ratios loaded / alone
        cells = numbers(rf"^{policy} +{N}s +{N}s +{N}s +{N}s +{N} +{N}$", out)
        positive(cells)
        # the ratios are of the unrounded times
        assert cells[4] == pytest.approx(cells[2] / cells[0], rel=0.05), cells
        assert cells[5] == pytest.approx(cells[3] / cells[1], rel=0.05), cells


def test_scan_corpus(tmp_path: Path, bench_cache: Path) -> None:
    out = run_bench("scan_corpus.py", "--tiny", "--repeat", "2", "--json", str(tmp_path / "scan.json"),
                    tmp=tmp_path, cache=bench_cache)
    assert len(re.findall(rf"^bench-owner/tiny-\d +{N}s +{N} files +{N} py lines$", out, re.MULTILINE)) == 2
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["records"] == 2
    positive([summary[k] for k in ("total_scan_s", "wall_s", "median_s", "max_s", "python_lines")])
    written = json.loads((tmp_path / "scan.json").read_text())
    assert written["records"] == 2 and len(written["rows"]) == 2


# the practice task whose gold runs quickest: the benchmarks' code paths, not their numbers, are checked
TINY_TASK = "varlen_cls"


@pytest.mark.slow
def test_harness_overhead(tmp_path: Path, bench_cache: Path) -> None:
    # on the cheapest practice task (the script's default, charlm, is what its targets were set on)
    out = run_bench("harness_overhead.py", "--tiny", "--task", TINY_TASK, tmp=tmp_path, cache=bench_cache,
                    timeout=900)
    plain, boxed, _cost, _per_evaluation = numbers(  # a difference: noise may make it negative
        rf"^process start: plain {N} ms, in the sandbox {N} ms: sandbox cost {N} ms per process, "
        rf"{N} ms per evaluation", out)
    positive([plain, boxed])
    positive(numbers(rf"^steady-state step time: plain {N} ms, probed {N} ms, ratio {N} \(target", out))
    total, processes, _overhead = numbers(
        rf"^evaluation of the gold prediction: {N} s in all, {N} s in its two processes, "
        rf"harness overhead {N} s", out)
    positive([total, processes])


@pytest.mark.slow
def test_validity_margins(tmp_path: Path, bench_cache: Path) -> None:
    out = run_bench("validity_margins.py", "--tiny", "--task", TINY_TASK, tmp=tmp_path, cache=bench_cache,
                    timeout=900)
    assert f"\n## {TINY_TASK}\n" in out, out
    positive(numbers(rf"^curve band {N}; gold same-seed drift {N}; cross-seed spread {N}$", out))
    rows = re.findall(rf"^(\w+) +{N} +{N} +{N}  correct: ", out, re.MULTILINE)
    assert rows, out
    for _signal, limit, correct, broken in rows:
        assert all(not math.isnan(float(v)) for v in (limit, correct, broken)), rows
    # the curve: value/limit of the gold and of the broken one (first failing numerics), both measured
    curve = {r[0]: r for r in rows}["curve"]
    positive([float(v) for v in curve[1:]])
    assert all(math.isfinite(float(v)) for v in curve[1:]), curve
    assert re.search(r"^verdicts that changed between runs: ", out, re.MULTILINE), out


@pytest.mark.slow
def test_ray_bench(tmp_path: Path, bench_cache: Path) -> None:
    out = run_bench("ray_bench.py", "--tiny", tmp=tmp_path, cache=bench_cache, timeout=900)
    rows = re.findall(rf"^(local, \d worker\(s\)|Ray, \d worker node\(s\)) +{N} +{N} +{N}x$", out,
                      re.MULTILINE)
    assert [r[0] for r in rows] == ["local, 1 worker(s)", "local, 2 worker(s)", "Ray, 1 worker node(s)",
                                    "Ray, 2 worker node(s)"], out
    non_negative([float(r[1]) for r in rows])  # walls: a tiny run may round to 0.00 s
    positive([float(v) for r in rows for v in r[2:]])
    local, ray = numbers(rf"^per evaluation with nothing to run \(1 vs 3 evaluations\): local {N} s, "
                         rf"Ray {N} s", out)
    overhead = numbers(rf"^Ray's overhead per evaluation: {N} s \(goal: under 1 s\)", out)[0]
    assert overhead == pytest.approx(ray - local, abs=0.011), (local, ray, overhead)


def test_tpu_cost(tmp_path: Path) -> None:
    """The cost of one pass is each measured gold's wall on its chips, at each TPU price."""
    from gpu2tpu.harness.ref_store import COMPLETE
    from gpu2tpu.harness.references import reference_key
    from gpu2tpu.record.targets import get_target
    from gpu2tpu.tasks.finder import find_task

    spec = find_task("cifar_amp")
    bundle = tmp_path / "cache" / "references" / f"cifar_amp-{reference_key(spec, get_target('xla-cpu'))}"
    for run, wall in (("gold", 1800.0), *((f"seed-{s}", 360.0) for s in spec.seeds)):
        (bundle / run).mkdir(parents=True)
        (bundle / run / "process.json").write_text(json.dumps({"wall_s": wall}))
    (bundle / COMPLETE).write_text("{}")
    out = run_bench("tpu_cost.py", tmp=tmp_path, cache=tmp_path / "cache")
    hours = 1800.0 * spec.target_chips / 3600
    assert f"1 task(s) measured, 1 attempt(s) each: {hours:.2f} chip-hours" in out, out
    assert f"references {360.0 * len(spec.seeds) / 3600:.2f} h" in out, out
    assert f"| tpu-v5e | 1.20 | {hours * 1.20:.2f} |" in out, out


def test_kernel_view_overhead(tmp_path: Path, bench_cache: Path) -> None:
    out = run_bench("kernel_view_overhead.py", "--tiny", tmp=tmp_path, cache=bench_cache)
    plain, watched, ratio = numbers(rf"^loops in 0.2 CPU s: plain {N}, watched {N}, ratio {N} "
                                    rf"\(target >= 0.9\)", out)
    positive([plain, watched, ratio])
    assert ratio == pytest.approx(watched / plain, abs=0.002), (plain, watched, ratio)
