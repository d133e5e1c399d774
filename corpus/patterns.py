"""What the scanner looks for: GPU constructs, XLA hazards, CUDA-only packages, frameworks,
licences.

Every pattern is a regular expression over Python source with its comments removed
(`without_comments`: whole-line and trailing ones), but boolean-mask indexing, which is read from
the parsed code where it parses (`bool_mask_lines`). They are static heuristics: they count what
the code says, not what a run would execute.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize

# name -> regex. Counts are occurrences summed over all Python files.
# one link of a call chain between two host transfers: `.permute(1, 2, 0)` or `.data`
_LINK = r"(?:\.\w+(?:\([^()\n]*\))?)"

CONSTRUCTS: dict[str, str] = {
    # CUDA runtime idioms (tier 1)
    "cuda_call": r"\.cuda\(",
    "torch_cuda": r"\btorch\.cuda\.",
    "cuda_string": r"""["']cuda(?::\d+)?["']""",
    "cudnn_flags": r"\bcudnn\.(?:benchmark|deterministic|enabled)\b",
    "pin_memory": r"\bpin_memory\b",
    "non_blocking": r"\bnon_blocking\s*=\s*True\b",
    # precision, distribution, compilation (tier 2)
    "autocast": r"\bautocast\s*\(|\bamp\.autocast\b|\bpartial\(\s*(?:[\w\.]*\.)?autocast\b"
    r"|\bis_autocast_enabled\s*\(",
    "grad_scaler": r"\bGradScaler\b",
    "half_precision": r"\.half\(\)|\btorch\.float16\b|\btorch\.half\b",
    "tf32_flags": r"\ballow_tf32\b|\bset_float32_matmul_precision\b",
    "distributed": r"\btorch\.distributed\b|\bDistributedDataParallel\b|\bnccl\b"
    r"|\binit_process_group\b|\bDistributedSampler\b"
    # Lightning's DDP chosen by name: distributed_backend / accelerator / strategy = "ddp..."
    r"|\b(?:distributed_backend|accelerator|strategy)\b[\"'\]]*\s*[=:]\s*[\"']ddp",
    "data_parallel": r"(?<!Distributed)\bDataParallel\s*\(",
    "torch_compile": r"\btorch\.compile\s*\(|\btorch\._dynamo\b",
    "apex": r"^\s*(?:from|import)\s+apex\b|\bapex\.(?:amp|parallel|optimizers|normalization)\b",
    # custom kernels (tier 3)
    "cpp_extension": r"\bcpp_extension\b|\bCUDAExtension\b|\bCppExtension\b|\bload_inline\s*\(",
    "triton": r"^\s*(?:from|import)\s+triton\b",
    "triton_kernel": r"@triton\.(?:jit|autotune)\b",
    "numba_cuda": r"\bnumba\.cuda\b|from\s+numba\s+import\s+cuda\b",
    # other GPU-specific training features
    "clip_grad_norm": r"\bclip_grad_norm_?\s*\(",
    "sdpa": r"\bscaled_dot_product_attention\b",
    "grad_checkpointing": r"\butils\.checkpoint\b|\bcheckpoint_sequential\b"
    r"|\bgradient_checkpointing\b",
    # XLA hazards: host syncs and dynamic shapes
    # a call site, whatever its receiver (`[x.item() for x in torch.linspace(0, r, n)]` counts)
    "item": r"\.item\(\)",
    # one chain is one transfer: `x.detach().cpu().permute(1, 2, 0).numpy()` and
    # `x.cpu().data.numpy()` count once (and `x.cpu().item()` is the `.item()` call alone)
    "host_transfer": rf"\.(?:cpu|numpy|tolist)\(\)(?:{_LINK}*\.(?:cpu|numpy|tolist)\(\))*"
    rf"(?!{_LINK}*\.item\(\))",
    # numpy's np.nonzero / np.unique run on the host and are not XLA hazards
    "nonzero": r"(?<!\bnp\.)(?<!numpy\.)\b(?:nonzero|argwhere)\s*\(",
    "bool_mask_index": r"[\w\)\]]\[\s*~?\s*[\w\.]*mask\w*\s*\]"
    r"|[\w\)\]]\[(?![^\]\n]*\b(?:for|if|lambda)\b)[^\[\]\n:]*?[\w\)\]]\s*(?:==|!=|>=|<=|>|<)\s*[^\[\]\n]*\]",
    "unique": r"(?<!\bnp)(?<!numpy)\.unique\s*\(|\bunique_consecutive\s*\(",
    "masked_select": r"\bmasked_select\s*\(",
}
COMPILED = {name: re.compile(rx, re.MULTILINE) for name, rx in CONSTRUCTS.items()}

# Literal strings, one of which every match of the construct contains: a file without any of
# them is skipped for that construct (exact, and several times faster than running every regex).
NEEDLES: dict[str, tuple[str, ...]] = {
    "cuda_call": (".cuda(",), "torch_cuda": ("torch.cuda.",), "cuda_string": ("cuda",),
    "cudnn_flags": ("cudnn.",), "pin_memory": ("pin_memory",), "non_blocking": ("non_blocking",),
    "autocast": ("autocast",), "grad_scaler": ("GradScaler",),
    "half_precision": (".half()", "float16", "torch.half"),
    "tf32_flags": ("allow_tf32", "set_float32_matmul_precision"),
    "distributed": ("torch.distributed", "DistributedDataParallel", "nccl", "init_process_group",
                    "DistributedSampler", "ddp"),
    "data_parallel": ("DataParallel",), "torch_compile": ("torch.compile", "torch._dynamo"),
    "apex": ("apex",),
    "cpp_extension": ("cpp_extension", "CUDAExtension", "CppExtension", "load_inline"),
    "triton": ("triton",), "triton_kernel": ("@triton.",), "numba_cuda": ("numba",),
    "clip_grad_norm": ("clip_grad_norm",), "sdpa": ("scaled_dot_product_attention",),
    "grad_checkpointing": ("utils.checkpoint", "checkpoint_sequential", "gradient_checkpointing"),
    "item": (".item()",), "host_transfer": (".cpu()", ".numpy()", ".tolist()"),
    "nonzero": ("nonzero", "argwhere"), "bool_mask_index": ("[",), "unique": ("unique",),
    "masked_select": ("masked_select",),
}
assert NEEDLES.keys() == CONSTRUCTS.keys()


MAIN_GUARD = re.compile(r"^if\s+__name__\s*==\s*['\"]__main__['\"]", re.MULTILINE)
_COMMENT_LINE = re.compile(r"^\s*#.*$", re.MULTILINE)


def without_comments(code: str) -> str:
    """The source with every comment blanked, trailing ones included (`x.cpu()  # y.numpy()`
    counts one construct) and the text of triple-quoted strings (docstrings, code kept in a string)
    between their quotes; line numbers are kept. Source the tokenizer rejects (Python 2) loses
    its whole-line comments only."""
    lines = code.split("\n")
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type == tokenize.COMMENT:
                row, col = tok.start
                lines[row - 1] = lines[row - 1][:col]
            elif tok.type == tokenize.STRING and tok.string.endswith(TRIPLE_QUOTES):
                _blank_inside(lines, tok.start, tok.end)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return _COMMENT_LINE.sub("", code)
    return "\n".join(lines)


TRIPLE_QUOTES = ('"' * 3, "'" * 3)


def _blank_inside(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> None:
    """Spaces for a triple-quoted string's text between its opening and closing quotes."""
    (r0, c0), (r1, c1) = start, end
    first = lines[r0 - 1]
    opening = c0 + len(first[c0:]) - len(first[c0:].lstrip("rRbBuUfF")) + 3
    for row in range(r0, r1 + 1):
        line = lines[row - 1]
        a = opening if row == r0 else 0
        b = c1 - 3 if row == r1 else len(line)
        lines[row - 1] = line[:a] + " " * max(0, b - a) + line[b:]


def count_constructs(code: str, counts: dict[str, int],
                     only: tuple[str, ...] | None = None) -> None:
    """Add this file's occurrences of every construct (or of those in `only`) to `counts`."""
    for name, _line in construct_sites(code, only):
        counts[name] += 1


def construct_sites(code: str, only: tuple[str, ...] | None = None) -> list[tuple[str, int]]:
    """(construct, 1-based line) for each occurrence in this file. Boolean-mask indexing is read
    from the parsed code where it parses (`bool_mask_lines`), by its regex otherwise."""
    out: list[tuple[str, int]] = []
    for name, rx in COMPILED.items():
        if (only is not None and name not in only) or not any(n in code for n in NEEDLES[name]):
            continue
        lines = bool_mask_lines(code) if name == "bool_mask_index" else None
        if lines is None:
            lines = [code.count("\n", 0, m.start()) + 1 for m in rx.finditer(code)]
        out.extend((name, line) for line in lines)
    return out


# a name that holds positions, not a mask (`mask[mask_idx] = 1`: an integer index array)
_INDEX_NAME = re.compile(r"(?:idx|idxs|index|indices|inds|ids|_id|pos|num|len|size|count)$",
                         re.IGNORECASE)


def bool_mask_lines(code: str) -> list[int] | None:
    """Lines of subscripts indexed by a boolean mask: a comparison (`x[y == 0]`), a negation or
    `&`/`|` of one, a reduction to booleans (`x[m.all(1)]`), a name that says mask
    (`x[~valid_mask]`, `x[self.mask]`, `x[bool_masked_pos]`), or a name every assignment in its
    function gives a mask (`keep = w > 0` ... `boxes[keep]`); an element of a tuple index counts
    (`mask[mask.all(1), 0]`). None when the code does not parse. A comprehension's `if` filter is
    not a subscript, and a `mask_idx` is a position array."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    lines: list[int] = []
    scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))]
    for scope in scopes:
        nodes = _own_nodes(scope)
        masks = _mask_names(nodes)
        lines += [node.lineno for node in nodes
                  if isinstance(node, ast.Subscript) and _is_mask(node.slice, masks)]
    return sorted(lines)


def _own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a module or function body, less those of the functions nested in it."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def _mask_names(nodes: list[ast.AST]) -> frozenset[str]:
    """Names that every assignment among a scope's own nodes makes a mask (none anything else)."""
    given: dict[str, bool] = {}
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    mask = not isinstance(node, ast.AugAssign) and _is_mask(node.value, frozenset())
                    given[target.id] = given.get(target.id, True) and mask
        elif isinstance(node, (ast.For, ast.comprehension, ast.NamedExpr)):
            for sub in ast.walk(node.target):
                if isinstance(sub, ast.Name):
                    given[sub.id] = False
    return frozenset(name for name, mask in given.items() if mask)


_BOOL_REDUCTIONS = {"all", "any", "bool", "isnan", "isinf", "isfinite", "logical_not", "logical_and",
                    "logical_or", "logical_xor"}


def _is_mask(node: ast.expr, masks: frozenset[str] = frozenset()) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Tuple):
        return any(_is_mask(e, masks) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return _is_mask(node.operand, masks)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return _is_mask(node.left, masks) or _is_mask(node.right, masks)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in _BOOL_REDUCTIONS
    if isinstance(node, ast.Name) and node.id in masks:
        return True
    name = node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else None)
    if name is None or "mask" not in name.lower():
        return False
    return "bool" in name.lower() or not _INDEX_NAME.search(name)

# Packages that need an NVIDIA GPU (no CPU/XLA path): canonical name -> import/pip names.
CUDA_ONLY_DEPS: dict[str, tuple[str, ...]] = {
    "apex": ("apex",),
    "flash_attn": ("flash_attn", "flash_attn_interface"),
    "xformers": ("xformers",),
    "bitsandbytes": ("bitsandbytes",),
    "mamba_ssm": ("mamba_ssm",),
    "causal_conv1d": ("causal_conv1d",),
    "deepspeed": ("deepspeed",),
    "tinycudann": ("tinycudann",),
    "spconv": ("spconv",),
    "MinkowskiEngine": ("minkowskiengine",),
    "pointnet2_ops": ("pointnet2_ops", "pointnet2_utils_cuda"),
    "DCNv2": ("dcn_v2", "dcnv2"),
    "torchsparse": ("torchsparse",),
    "nvdiffrast": ("nvdiffrast",),
    "diff_gaussian_rasterization": ("diff_gaussian_rasterization",),
    "simple_knn": ("simple_knn",),
    "knn_cuda": ("knn_cuda",),
    "cupy": ("cupy",),
    "pycuda": ("pycuda",),
    "nvidia_dali": ("nvidia.dali", "nvidia_dali"),
    "transformer_engine": ("transformer_engine",),
    "mmcv_ops": ("mmcv.ops", "mmcv_full"),
}
_DEP_BY_NAME = {alias: canon for canon, names in CUDA_ONLY_DEPS.items() for alias in names}

# Frameworks: canonical -> top-level import names.
FRAMEWORKS: dict[str, tuple[str, ...]] = {
    "torch": ("torch",),
    "lightning": ("pytorch_lightning", "lightning"),
    "transformers": ("transformers",),
    "tensorflow": ("tensorflow",),
    "jax": ("jax", "flax"),
}
_FRAMEWORK_BY_IMPORT = {alias: canon for canon, names in FRAMEWORKS.items() for alias in names}

IMPORT_RE = re.compile(r"^\s*(?:from\s+([\w\.]+)\s+import|import\s+([\w\.]+(?:\s*,\s*[\w\.]+)*))",
                       re.MULTILINE)


def imported_modules(text: str) -> set[str]:
    """Dotted module names imported by a Python file (`import a.b, c` / `from a.b import x`)."""
    mods: set[str] = set()
    for frm, imp in IMPORT_RE.findall(text):
        if frm:
            mods.add(frm)
        else:
            mods.update(m.strip() for m in imp.split(","))
    return {m for m in mods if m and not m.startswith(".")}


def frameworks_of(mods: set[str]) -> set[str]:
    return {_FRAMEWORK_BY_IMPORT[m.split(".")[0]] for m in mods
            if m.split(".")[0] in _FRAMEWORK_BY_IMPORT}


def cuda_deps_of_name(name: str) -> str | None:
    """Canonical CUDA-only package for a module or distribution name, if it is one."""
    norm = name.strip().lower().replace("-", "_")
    if norm in _DEP_BY_NAME:
        return _DEP_BY_NAME[norm]
    if norm.startswith(("spconv_cu", "cupy_cuda", "nvidia_dali")):  # spconv-cu118, cupy-cuda12x
        return _DEP_BY_NAME[norm.split("_")[0] if not norm.startswith("nvidia") else "nvidia_dali"]
    parts = norm.split(".")
    for i in range(len(parts), 0, -1):  # mmcv.ops.xyz -> mmcv.ops
        head = ".".join(parts[:i])
        if head in _DEP_BY_NAME:
            return _DEP_BY_NAME[head]
    return None


# Licences: (SPDX id, permissive, all phrases that must appear). First match wins; the text is
# lower-cased with whitespace collapsed before matching. A phrase starting with "^" must appear in
# the title (the first 300 characters): the GPL-3.0 text itself names the Affero and Lesser GPLs.
LICENCES: tuple[tuple[str, bool, tuple[str, ...]], ...] = (
    ("AGPL-3.0", False, ("^gnu affero general public license",)),
    ("LGPL-3.0", False, ("^gnu lesser general public license", "version 3")),
    ("LGPL-2.1", False, ("^gnu lesser general public license",)),
    ("GPL-3.0", False, ("gnu general public license", "version 3")),
    ("GPL-2.0", False, ("gnu general public license", "version 2")),
    ("MPL-2.0", False, ("mozilla public license", "2.0")),
    ("CC-BY-NC-SA-4.0", False, ("attribution-noncommercial-sharealike",)),
    ("CC-BY-NC-ND-4.0", False, ("attribution-noncommercial-noderivatives",)),
    ("CC-BY-NC-4.0", False, ("attribution-noncommercial",)),
    ("CC-BY-NC-4.0", False, ("creative commons", "noncommercial")),
    ("CC-BY-SA-4.0", False, ("attribution-sharealike",)),
    ("CC0-1.0", True, ("cc0 1.0 universal",)),
    ("CC-BY-4.0", True, ("creative commons attribution 4.0",)),
    ("Apache-2.0", True, ("apache license", "version 2.0")),
    ("Apache-2.0", True, ("licensed under the apache license, version 2.0",)),
    ("BSL-1.0", True, ("boost software license",)),
    ("Unlicense", True, ("free and unencumbered software released into the public domain",)),
    ("WTFPL", True, ("do what the fuck you want to",)),
    ("ISC", True, ("permission to use, copy, modify, and/or distribute this software for any",)),
    ("MIT", True, ("permission is hereby granted, free of charge",)),
    ("BSD-3-Clause", True, ("redistribution and use in source and binary forms",
                            "neither the name")),
    ("BSD-3-Clause", True, ("redistribution and use in source and binary forms",
                            "endorse or promote products")),
    ("BSD-2-Clause", True, ("redistribution and use in source and binary forms",)),
    ("Zlib", True, ("this software is provided 'as-is', without any express or implied warranty",)),
    ("LicenseRef-NVIDIA-Source-Code", False, ("nvidia source code license",)),
    ("LicenseRef-research-only", False, ("non-commercial",)),
    ("LicenseRef-research-only", False, ("noncommercial",)),
    ("LicenseRef-research-only", False, ("research purposes only",)),
    ("LicenseRef-all-rights-reserved", False, ("all rights reserved",)),
    # short statements that name a licence instead of including its text
    ("Apache-2.0", True, ("apache 2.0",)),
    ("Apache-2.0", True, ("apache-2.0",)),
    ("Apache-2.0", True, ("apache license 2.0",)),
    ("MIT", True, ("mit license",)),
    ("BSD-3-Clause", True, ("bsd 3-clause",)),
    ("BSD-3-Clause", True, ("bsd-3-clause",)),
    ("GPL-3.0", False, ("gpl-3.0",)),
    ("GPL-3.0", False, ("gplv3",)),
    ("CC-BY-NC-4.0", False, ("cc-by-nc",)),
    ("CC-BY-NC-4.0", False, ("cc by-nc",)),
)
_SPDX_TAG = re.compile(r"spdx-license-identifier:\s*([\w\.\-\+]+)", re.IGNORECASE)
PERMISSIVE_SPDX = {spdx for spdx, ok, _ in LICENCES if ok} | {"0BSD", "BSD-3-Clause-Clear",
                                                               "PSF-2.0"}


def detect_licence(text: str) -> tuple[str, bool]:
    """(SPDX id, permissive) for a licence file's text; unknown text -> LicenseRef-unknown."""
    tag = _SPDX_TAG.search(text)
    if tag:
        spdx = tag.group(1)
        return spdx, spdx in PERMISSIVE_SPDX
    flat = " ".join(text.lower().replace("\u2019", "'").split())
    head = flat[:300]
    for spdx, permissive, phrases in LICENCES:
        if all(p[1:] in head if p.startswith("^") else p in flat for p in phrases):
            return spdx, permissive
    return "LicenseRef-unknown", False


# Calls that compile or load CUDA code at run time, by the function they must resolve to.
_COMPILE_TARGETS = {"torch.utils.cpp_extension.load": "cpp_extension.load",
                    "torch.utils.cpp_extension.load_inline": "cpp_extension.load",
                    "torch.ops.load_library": "torch.ops.load_library"}


def dotted(node: ast.expr) -> str:
    """`a.b.c` for a Name/Attribute chain, else ''."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *parts[::-1]]) if isinstance(node, ast.Name) else ""


def compile_call_site(callee: str, bound: dict[str, str]) -> str | None:
    """The site name of a call (`cpp_extension.load`, `torch.ops.load_library`) when its callee,
    read through the module's imports (`from torch.utils.cpp_extension import load as L`,
    `from torch.utils import cpp_extension`, `import torch.utils.cpp_extension as ext`),
    resolves to the torch function; any other `load(...)` (`demo.load`, `data_utils.load`,
    `np.ctypeslib.load_library`) is None. A bare `torch` counts as the torch module."""
    head, _, rest = callee.partition(".")
    full = bound.get(head, "torch" if head == "torch" else "")
    if not full or full.startswith("."):  # unbound (a local or parameter) or a relative import
        return None
    return _COMPILE_TARGETS.get(f"{full}.{rest}" if rest else full)


def builds_without_cuda(setup_text: str) -> bool:
    """A setup script that uses both `CppExtension` and `CUDAExtension` (not just imports them):
    it builds its extensions for CPU and adds CUDA sources only where CUDA is present (as
    pyg_autoscale's `Extension = CppExtension ... if WITH_CUDA: Extension = CUDAExtension`)."""
    if "CppExtension" not in setup_text or "CUDAExtension" not in setup_text:
        return False
    try:
        tree = ast.parse(setup_text)
    except (SyntaxError, ValueError):
        return False
    used = {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(tree)
            if isinstance(n, (ast.Name, ast.Attribute))}
    return {"CppExtension", "CUDAExtension"} <= used
