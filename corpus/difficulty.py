"""Difficulty of a migration, derived from scan counts: tier, flags, score and bucket.

Tier (the hardest kind of GPU dependency present):
  0 device-agnostic: none of the constructs below.
  1 CUDA runtime idioms: `.cuda()`, `torch.cuda.*`, "cuda" strings, cudnn flags, pin_memory,
    non_blocking.
  2 precision / distribution / compilation: autocast, GradScaler, `.half()`/float16, TF32 flags,
    torch.distributed / DDP / NCCL, DataParallel, torch.compile, apex imports.
  3 the training path cannot run without CUDA-only code: at least one `hard` use site of a
    CUDA-only package, a compiled CUDA extension, Triton or numba.cuda (see gpu_deps.py: an
    import guarded by try/except, behind an `if` or in a function, or outside the training
    entry's import closure does not count). Scans older than scanner 2.0 used the presence of
    any such code or listed package instead.

Score (0-100) = min(100, round(FLOOR[tier] + sum_c weight_c * n_c / (n_c + half_c))): each
component's count n_c saturates (it is worth half its weight at n_c = half_c), and the tier sets a
floor. The weights sum to 60 and the tier-3 floor is 40, so scores reach 100 only in the limit.
Bucket: easy below 30, medium below 55, hard from 55. (Calibrated once, on the 287 snapshots
fetched while the corpus was curated: roughly a third of them fall in each bucket.)
"""

from __future__ import annotations

from typing import Any

TIER_FLOOR = {0: 0, 1: 10, 2: 25, 3: 40}
BUCKETS = (("easy", 0), ("medium", 30), ("hard", 55))  # (name, lowest score)

TIER1 = ("cuda_call", "torch_cuda", "cuda_string", "cudnn_flags", "pin_memory", "non_blocking")
TIER2 = ("autocast", "grad_scaler", "half_precision", "tf32_flags", "distributed",
         "data_parallel", "torch_compile", "apex")
TIER3 = ("cpp_extension", "triton_kernel", "numba_cuda")

# (component, weight, half-saturation count, counts summed; "size:*" / "deps" are special)
COMPONENTS: tuple[tuple[str, float, float, tuple[str, ...]], ...] = (
    ("custom kernels", 9, 2, ("size:cuda_files", "cpp_extension", "triton_kernel", "numba_cuda")),
    ("CUDA-only packages", 8, 1, ("deps",)),
    ("distribution", 6, 4, ("distributed", "data_parallel")),
    ("mixed precision", 5, 4, ("autocast", "grad_scaler", "half_precision", "apex")),
    ("compilation", 2, 1, ("torch_compile", "triton")),
    ("CUDA runtime idioms", 6, 20, ("cuda_call", "torch_cuda", "cuda_string", "cudnn_flags",
                                    "non_blocking", "pin_memory", "tf32_flags")),
    ("dynamic shapes", 8, 10, ("nonzero", "bool_mask_index", "unique", "masked_select")),
    ("host syncs", 6, 20, ("item", "host_transfer")),
    ("other GPU features", 2, 3, ("grad_checkpointing", "sdpa", "clip_grad_norm")),
    ("code size (Python lines)", 8, 8000, ("size:python_lines",)),
)


def _count(scan: dict[str, Any], key: str) -> int:
    if key == "deps":
        return len(scan.get("cuda_only_deps") or [])
    if key.startswith("size:"):
        return int((scan.get("size") or {}).get(key[5:], 0) or 0)
    return int((scan.get("counts") or {}).get(key, 0) or 0)


def tier_of(scan: dict[str, Any]) -> int:
    counts = scan.get("counts") or {}
    cuda_only = scan.get("cuda_only")
    if isinstance(cuda_only, dict):  # scanner 2.x: only hard dependencies make tier 3
        if cuda_only.get("hard"):
            return 3
    elif (_count(scan, "size:cuda_files") or scan.get("cuda_only_deps")
            or any(counts.get(k, 0) for k in TIER3)):
        return 3
    if any(counts.get(k, 0) for k in TIER2):
        return 2
    if any(counts.get(k, 0) for k in TIER1):
        return 1
    return 0


def score_of(scan: dict[str, Any], tier: int) -> int:
    total = float(TIER_FLOOR[tier])
    for _name, weight, half, keys in COMPONENTS:
        n = sum(_count(scan, k) for k in keys)
        total += weight * n / (n + half)
    return min(100, int(round(total)))


def bucket_of(score: int) -> str:
    name = BUCKETS[0][0]
    for bucket, low in BUCKETS:
        if score >= low:
            name = bucket
    return name


def flags_of(scan: dict[str, Any]) -> list[str]:
    """Short factual tags for what a migration will meet (sorted)."""
    c = scan.get("counts") or {}
    size = scan.get("size") or {}
    fw = scan.get("frameworks") or {}
    lic = scan.get("licence") or {}
    deps = scan.get("dependencies") or {}
    entry = scan.get("entry_points") or {}
    rules = {
        "custom_cuda_kernels": size.get("cuda_files", 0) > 0,
        "cpp_extension": c.get("cpp_extension", 0) > 0,
        "triton_kernels": c.get("triton_kernel", 0) > 0,
        "cuda_only_deps": bool(scan.get("cuda_only_deps")),
        "numba_cuda": c.get("numba_cuda", 0) > 0,
        "amp": c.get("autocast", 0) + c.get("grad_scaler", 0) > 0,
        "fp16": c.get("half_precision", 0) > 0,
        "tf32": c.get("tf32_flags", 0) > 0,
        "distributed": c.get("distributed", 0) > 0,
        "data_parallel": c.get("data_parallel", 0) > 0,
        "torch_compile": c.get("torch_compile", 0) > 0,
        "hardcoded_cuda": c.get("cuda_call", 0) + c.get("cuda_string", 0) > 0,
        "cudnn_flags": c.get("cudnn_flags", 0) > 0,
        # on the training path when the scan knows it (scanner 2.x), else anywhere
        "dynamic_shapes": sum((scan.get("training_path_counts") or c).get(k, 0)
                              for k in ("nonzero", "bool_mask_index", "unique",
                                        "masked_select")) > 0,
        "host_sync_item": c.get("item", 0) > 0,
        "grad_clipping": c.get("clip_grad_norm", 0) > 0,
        "grad_checkpointing": c.get("grad_checkpointing", 0) > 0,
        "sdpa": c.get("sdpa", 0) > 0,
        "lightning": fw.get("lightning", 0) > 0,
        "not_torch_primary": fw.get("torch", 0) == 0
        or fw.get("tensorflow", 0) + fw.get("jax", 0) > fw.get("torch", 0),
        "no_licence": not lic.get("spdx"),
        "non_permissive": bool(lic.get("spdx")) and not lic.get("permissive"),
        "no_dependency_file": not deps.get("files"),
        "no_train_entry": not entry.get("train")
        and (scan.get("cuda_only") or {}).get("roots_from") != "train_command",
        "large": size.get("python_lines", 0) > 60000,
        "notebooks": size.get("notebooks", 0) > 0,
        "old_torch_pin": _old_torch(deps.get("pinned") or {}),
        "incomplete_scan": scan.get("missing_scanned_blobs", 0) > 0,
    }
    return sorted(name for name, hit in rules.items() if hit)


def _old_torch(pinned: dict[str, str]) -> bool:
    """torch (pip) or pytorch (conda) pinned below 1.8: old APIs, no torch_xla 2.x wheel."""
    version = pinned.get("torch") or pinned.get("pytorch")  # pip or conda name
    if not version:
        return False
    try:
        major, minor = (int(x) for x in version.split("+")[0].split(".")[:2])
    except ValueError:
        return False
    return (major, minor) < (1, 8)


def derive(scan: dict[str, Any]) -> dict[str, Any]:
    """tier, flags, score and bucket for a scan dict (as the scanner builds it)."""
    tier = tier_of(scan)
    score = score_of(scan, tier)
    return {"tier": tier, "flags": flags_of(scan), "score": score, "bucket": bucket_of(score)}
