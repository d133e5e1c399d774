"""How big is the model a project trains? Read from the repository, each finding with file:line.

Findings, by kind:
  name   a pretrained checkpoint or architecture name ("codet5_base", "lmsys/vicuna-13b-v1.5",
         "resnet50", "ViT-L/14", "gpt2-medium"): sized by NAMES below, or by the count in the
         name for the language-model families in COUNTED_FAMILIES ("llama-2-7b", "opt-1.3b")
  arch   hidden size and layer count stated in the same config file or shell script (`d_model:
         768`, `N_LAYER="12"`, `--n_embd 768`): about 12 * layers * hidden^2 parameters (one
         transformer block per layer; an order of magnitude for other networks)
  count  a parameter count a README states ("110M parameters", "a 1.1B Llama model"), read from
         the top README and those beside the training code
Where a name counts: anywhere in the training command, shell scripts and config values; in
Python only as a default (`default=`), an assignment to a model/arch/backbone/checkpoint name,
`from_pretrained(...)` or a call of a torchvision/timm-style constructor, outside docstrings;
never on a line about a tokenizer (its checkpoint is not the model) nor in a `choices=` list.

The strongest tier holding any finding decides (TIERS, strongest first): names and sizes in
the training command (it says what the task trains), then names and architecture sizes on the
training path (the entry's import closure, the configs and shell scripts it runs), then a count a
README states, then names and sizes elsewhere. README counts rank below the training path
because READMEs announce flagship models (xlstm: "a 7B parameter xLSTM"; its command trains a
parity toy). Within a tier the size most findings give wins (ties: the first finding), but of
README counts the first one stated wins: tables list a family, base model first (VAR's #params
column reads 310M, 600M, 1B, 2B, 2.3B; its command trains depth 16, the 310M one). No finding:
the caller falls back to its data-scale estimate (corpus/runnability.py) and says so.
Sizes: small below SMALL_MAX parameters, medium below MEDIUM_MAX, large from there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

SMALL_MAX = 50e6
MEDIUM_MAX = 1e9
MAX_CODE = 160  # characters of the quoted line
MAX_JSON_BYTES = 100_000
MAX_JSON_FILES = 200

README_COUNT = "count in a README"
TIERS = ("the training command", "name on the training path",
         "architecture on the training path", README_COUNT, "name in code or configs",
         "architecture in a config")

# Known names -> parameters (millions): published counts of the reference models (torchvision,
# timm, Hugging Face model cards). Matched on lowercase text with "_" read as "-".
NAMES: tuple[tuple[str, float], ...] = (
    (r"(?:code|flan-)?t5(?:-v1-1)?-small", 60), (r"(?:code|flan-)?t5(?:-v1-1)?-base", 220),
    (r"(?:code|flan-)?t5(?:-v1-1)?-large", 770), (r"(?:code|flan-)?t5(?:-v1-1)?-xl", 3000),
    (r"(?:code|flan-)?t5(?:-v1-1)?-xxl", 11000),
    (r"distilbert-base", 66), (r"bert-base", 110), (r"bert-large", 340),
    (r"roberta-base", 125), (r"roberta-large", 355), (r"codebert(?:-base)?", 125),
    (r"deberta(?:-v3)?-base", 184), (r"deberta(?:-v3)?-large", 435),
    (r"deberta-v2-xlarge", 900), (r"deberta-v2-xxlarge", 1500),
    (r"albert-base", 12), (r"electra-small", 14), (r"electra-base", 110),
    (r"electra-large", 335), (r"bart-base", 140), (r"bart-large", 400),
    (r"xlnet-base", 110), (r"xlnet-large", 340),
    (r"distilgpt2", 82), (r"gpt2-medium", 355), (r"gpt2-large", 774), (r"gpt2-xl", 1558),
    (r"gpt2(?!-)", 124),
    (r"(?:llama|vicuna|mistral|mixtral|falcon|gpt-j|gpt-neox)(?![a-z0-9])(?!-?\d)", 7000),
    (r"stable-diffusion", 1066),
    (r"resnet-?18", 11.7), (r"resnet-?34", 21.8), (r"resnet-?50", 25.6), (r"resnet-?101", 44.5),
    (r"resnet-?152", 60.2), (r"resnet-?20", 0.27), (r"resnet-?32", 0.46), (r"resnet-?44", 0.66),
    (r"resnet-?56", 0.85), (r"resnet-?110", 1.7), (r"resnet-?1202", 19.4),
    (r"resnext-?50", 25.0), (r"resnext-?101", 44.2), (r"wide-resnet-?50-2", 68.9),
    (r"wide-resnet-?101-2", 126.9), (r"wrn-?28-10", 36.5), (r"wrn-?28-2", 1.5),
    (r"wrn-?40-2", 2.2), (r"wrn-?16-\d+", 2.7),
    (r"densenet-?121", 8.0), (r"densenet-?169", 14.1), (r"densenet-?201", 20.0),
    (r"densenet-?161", 28.7), (r"mobilenet-?v2", 3.5), (r"mobilenet-?v3", 5.5),
    (r"efficientnet-?b0", 5.3), (r"efficientnet-?b7", 66),
    (r"alexnet", 61.1), (r"squeezenet", 1.2), (r"dla-?34", 15.7),
    (r"(?:vit|deit)-?(?:tiny|ti)(?:-?patch|[-/])?(?:8|14|16|32)|(?:vit|deit)-tiny", 5.7),
    (r"(?:vit|deit)-?(?:small|s)(?:-?patch|[-/])?(?:8|14|16|32)|(?:vit|deit)-small", 22),
    (r"(?:vit|deit)-?(?:base|b)(?:-?patch|[-/])?(?:8|14|16|32)|(?:vit|deit)-base", 86),
    (r"vit-?(?:large|l)(?:-?patch|[-/])?(?:14|16|32)|vit-large", 304),
    (r"vit-?(?:huge|h)(?:-?patch|[-/])?(?:14|16)|vit-huge", 632),
    (r"vit-?(?:giant|g)(?:-?patch|[-/])?14|vit-giant", 1011),
    (r"(?:dit|sit)-s(?![a-z])", 33), (r"(?:dit|sit)-b(?![a-z])", 130),
    (r"(?:dit|sit)-l(?![a-z])", 458), (r"(?:dit|sit)-xl(?![a-z])", 675),
    (r"swin-(?:tiny|t)(?![a-z])", 28), (r"swin-(?:small|s)(?![a-z])", 50),
    (r"swin-(?:base|b)(?![a-z])", 88), (r"swin-(?:large|l)(?![a-z])", 197),
    (r"convnext-tiny", 28), (r"convnext-small", 50), (r"convnext-base", 89),
    (r"convnext-large", 198),
)
# language-model families whose checkpoint names carry their size ("pythia-2.8b", "opt-125m")
COUNTED_FAMILIES = (r"llama|vicuna|alpaca|mistral|mixtral|pythia|opt(?=-\d)|qwen|falcon|gpt-neox"
                    r"|gpt-neo|gpt-j|bloomz?|mpt|phi(?=-?\d)|gemma|olmo|codegen|starcoder|santacoder"
                    r"|codet5p|deepseek|baichuan|chatglm|rwkv|t5|mamba|cerebras-gpt|smollm"
                    r"|llava|zephyr|tulu|based|hyena")
_NAME = re.compile("|".join(f"(?:{p})" for p, _ in NAMES))
_NAME_PARTS = [re.compile(f"^(?:{p})$") for p, _ in NAMES]
_COUNTED = re.compile(r"(?<![a-z0-9])(?:" + COUNTED_FAMILIES + r")[a-z0-9.\-]{0,12}?[-\s]?"
                      r"(\d+(?:\.\d+)?)(m|b)(?![a-z0-9])(?!-?tokens)")
_BOUNDED_NAME = re.compile(r"(?<![a-z0-9])(" + _NAME.pattern + r")(?![a-z0-9])")
_STATED_COUNT = re.compile(  # "110M parameters", "3-billion-parameter", "a 1.1B Llama model"
    r"(?<![\w.\-])(\d+(?:\.\d+)?)[\s-]?(?:(k|thousand)\b(?=[\s-]*(?:total\s+)?param)"
    r"|(m|b|million|billion)\b)"
    r"[\s-]*(?:(?:trainable|learnable|total|model)\s+)?(?:param(?:eter)?s?\b"
    r"|(?:[a-z][\w\-]*\s+)?(?:model|llm|language model)s?\b)", re.IGNORECASE)
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9}
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_PARAMS_HEADER = re.compile(r"param", re.IGNORECASE)  # "#params", "#Params(M)", "Parameters"
_HEADER_UNIT = re.compile(r"\((k|m|b)\)", re.IGNORECASE)
_CELL_COUNT = re.compile(r"^\**\s*(\d+(?:\.\d+)?)\s*(k|m|b)?\s*\**$", re.IGNORECASE)
_PY_CONTEXT = re.compile(
    r"default\s*=\s*['\"]([^'\"]+)['\"]|from_pretrained\(\s*['\"]([^'\"]+)['\"]"
    r"|(?<![a-z])(?:model|arch|backbone|net|encoder|pretrained|name_or_path)\w*['\"]?\s*[:=]\s*"
    r"['\"]([^'\"]+)['\"]"
    r"|\b((?:resnet|resnext|wide_resnet|densenet|mobilenet_v|efficientnet_b|inception_v|vit_|"
    r"deit_|swin_|convnext_)\w*|alexnet)\s*\(", re.IGNORECASE)
_SKIP_LINE = re.compile(r"tokeniz|toker\b|vocab|choices\s*=|^\s*(?:def|class|>>>)\s", re.IGNORECASE)
_ABOUT_TOKENS = re.compile(r"tokeniz|toker\b|vocab", re.IGNORECASE)  # a previous line naming the argument
# `key: N`, `"key": N`, `KEY="N"` (shell), `--key N` / `--key=N` (command lines)
_SETTING = r"(?:^|[\s\-\"'{{,.])({})[\"']?\s*(?:[:=]|\s)\s*[\"']?(\d+)[\"']?(?=[\s,}}#;\\]|$)"
_HIDDEN = re.compile(_SETTING.format(r"hidden[_-]size|d[_-]model|n[_-]embd|n[_-]embed|embed[_-]dim"
                                     r"|hidden[_-]dim|emb[_-]dim|embedding[_-]dim|model[_-]dim"
                                     r"|n[_-]hidden"), re.IGNORECASE)
_LAYERS = re.compile(_SETTING.format(r"num[_-]hidden[_-]layers|n[_-]layers?|num[_-]layers|depth"
                                     r"|layers|num[_-]blocks|e[_-]layers"), re.IGNORECASE)
_README = re.compile(r"^readme(\.(md|rst|txt|markdown))?$", re.IGNORECASE)
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Finding:
    tier: int  # index into TIERS
    params: float
    what: str  # what was read: "names 'codet5-base'", "states 110M parameters"
    where: str  # file:line ("train_command" for the curated command)
    code: str


def size_of(params: float) -> str:
    return "small" if params < SMALL_MAX else "medium" if params < MEDIUM_MAX else "large"


def name_params(name: str) -> float | None:
    """Parameters of a known name or a counted checkpoint name (None: not in the table)."""
    norm = name.lower().replace("_", "-")
    if m := _COUNTED.search(norm):
        return float(m.group(1)) * _SCALE[m.group(2)]
    if m := _BOUNDED_NAME.search(norm):
        hit = m.group(1)
        for (_pattern, millions), whole in zip(NAMES, _NAME_PARTS, strict=True):
            if whole.match(hit):
                return millions * 1e6
    return None


def _names(text: str) -> list[tuple[str, float]]:
    """(name, parameters) for every sized name in `text`, in order."""
    norm = text.lower().replace("_", "-")
    found: list[tuple[int, str, float]] = []
    for m in _COUNTED.finditer(norm):
        found.append((m.start(), m.group(0), float(m.group(1)) * _SCALE[m.group(2)]))
    taken = [(s, s + len(n)) for s, n, _ in found]
    for m in _BOUNDED_NAME.finditer(norm):
        if any(a <= m.start() < b for a, b in taken):
            continue
        params = name_params(m.group(1))
        if params is not None:
            found.append((m.start(), m.group(1), params))
    return [(n, p) for _s, n, p in sorted(found)]


def _py_names(line: str) -> list[tuple[str, float]]:
    out = []
    for m in _PY_CONTEXT.finditer(line):
        value = next(g for g in m.groups() if g)
        out.extend(_names(value))
    return out


def _code(line: str) -> str:
    line = line.strip()
    return line if len(line) <= MAX_CODE else line[:MAX_CODE - 3] + "..."


def _name_findings(path: str, text: str, tier: int) -> list[Finding]:
    out = []
    is_py = path.endswith(".py")
    in_doc = False  # inside a Python docstring: usage examples, not what the project builds
    previous = ""
    for i, line in enumerate(text.splitlines(), 1):
        previous, before = line, previous
        if _ABOUT_TOKENS.search(before) and "default" in line:
            continue  # parser.add_argument('--vocab_type',\n default='gpt2', ...)
        quotes = line.count('"""') + line.count("'''") if is_py else 0
        if in_doc or quotes >= 2:
            in_doc ^= quotes % 2 == 1
            continue
        in_doc = quotes == 1
        if in_doc or _SKIP_LINE.search(line) or line.lstrip().startswith("#"):
            continue
        for name, params in (_py_names(line) if is_py else _names(line)):
            out.append(Finding(tier, params, f"names '{name}'", f"{path}:{i}", _code(line)))
    return out


def _table_count(line: str, column: int | None, unit: str | None) -> float | None:
    """The count in a table row's parameter column ("310M"; "41.4" under "#Params(M)")."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if column is None or column >= len(cells) or not (m := _CELL_COUNT.match(cells[column])):
        return None
    scale = m.group(2) or unit
    return float(m.group(1)) * _SCALE[scale.lower()] if scale else None


def _count_findings(path: str, text: str) -> list[Finding]:
    """Counts in prose and in the parameter column of a README's tables."""
    out = []
    column: int | None = None
    unit: str | None = None
    for i, line in enumerate(text.splitlines(), 1):
        if not _TABLE_ROW.match(line):
            column = None
        elif column is None:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            column = next((j for j, c in enumerate(cells) if _PARAMS_HEADER.search(c)), None)
            unit = (m.group(1) if column is not None and (m := _HEADER_UNIT.search(cells[column]))
                    else None)
        elif (params := _table_count(line, column, unit)) is not None:
            out.append(Finding(3, params, f"states {_fmt(params)} in the parameter column",
                               f"{path}:{i}", _code(line)))
            continue
        for m in _STATED_COUNT.finditer(line):
            params = float(m.group(1)) * _SCALE[(m.group(2) or m.group(3)).lower()]
            if params >= 1e4:  # "2 models", "1k steps" are no counts
                out.append(Finding(3, params, f"states '{m.group(0).strip()}'", f"{path}:{i}",
                                   _code(line)))
    return out


def _arch_finding(path: str, text: str, tier: int) -> Finding | None:
    hidden = layers = None
    for i, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("#"):
            continue
        if hidden is None and (m := _HIDDEN.search(line)) and int(m.group(2)) >= 16:
            hidden = (int(m.group(2)), i, line, m.group(1))
        if layers is None and (m := _LAYERS.search(line)) and 1 <= int(m.group(2)) <= 200:
            layers = (int(m.group(2)), i, m.group(1))
    if hidden is None or layers is None:
        return None
    params = 12.0 * layers[0] * hidden[0] ** 2
    line = f" (line {layers[1]})" if layers[1] != hidden[1] else ""
    what = f"{hidden[3]} {hidden[0]} x {layers[2]} {layers[0]}{line}"
    return Finding(tier, params, what, f"{path}:{hidden[1]}", _code(hidden[2]))


def files_to_read(paths: Iterable[tuple[str, int]]) -> list[str]:
    """Files beyond the scanner's own reads: READMEs (top two levels) and small JSON configs."""
    readmes, jsons = [], []
    for path, size in paths:
        p = PurePosixPath(path)
        if _README.match(p.name) and len(p.parts) <= 2 and 0 <= size <= 1_000_000:
            readmes.append(path)
        elif p.suffix.lower() == ".json" and 0 <= size <= MAX_JSON_BYTES and len(p.parts) <= 4:
            jsons.append(path)
    jsons.sort(key=lambda p: ("config" not in p.lower(), p.count("/"), p))
    return sorted(readmes) + jsons[:MAX_JSON_FILES]


def _near_training(path: str, train_files: set[str]) -> bool:
    """A README at the top or in a folder that holds (above) a training file."""
    folder = PurePosixPath(path).parent
    return folder == PurePosixPath(".") or any(
        folder in PurePosixPath(f).parents for f in train_files)


def findings(texts: Mapping[str, str], train_command: str | None, train_files: Iterable[str],
             train_configs: Iterable[str]) -> list[Finding]:
    """Every finding, in tier order then file order."""
    near = set(train_files) | set(train_configs) | _command_scripts(texts, train_command or "")
    out: list[Finding] = []
    if train_command:
        out += [Finding(0, p, f"names '{n}'", "train_command", _code(train_command))
                for n, p in _names(train_command)]
        if arch := _arch_finding("train_command", train_command, 0):  # model.d_model=128 ...
            out.append(Finding(0, arch.params, arch.what, "train_command", arch.code))
    for path in sorted(texts):
        text = texts[path]
        if _README.match(PurePosixPath(path).name):
            if _near_training(path, near):
                out += _count_findings(path, text)
            continue
        suffix = PurePosixPath(path).suffix.lower()
        if suffix not in (".py", ".sh") + _CONFIG_SUFFIXES or _is_dependency_file(path):
            continue
        on_path = path in near
        out += _name_findings(path, text, 1 if on_path else 4)
        if suffix != ".py" and (arch := _arch_finding(path, text, 2 if on_path else 5)):
            out.append(arch)
    return sorted(out, key=lambda f: f.tier)


def _command_scripts(texts: Mapping[str, str], command: str) -> set[str]:
    """Scripts and configs the command names, by path or by a path's tail (`sh ./scripts/x.sh`
    finds PatchTST_supervised/scripts/x.sh); of several, those in a folder it `cd`s into."""
    folders = {d.strip("./") for d in re.findall(r"\bcd\s+([^\s;&|]+)", command)}
    out: set[str] = set()
    for token in re.findall(r"[\w./+\-]+\.(?:sh|ya?ml|json)\b", command):
        tail = token.removeprefix("./")
        found = [p for p in texts if p == tail or p.endswith("/" + tail)]
        in_folder = [p for p in found if any(p == f"{d}/{tail}" for d in folders)]
        out.update(in_folder or found)
    return out


def _is_dependency_file(path: str) -> bool:
    return bool(re.search(r"(^|/)(environment|conda|requirements)[\w\-.]*\.ya?ml$|(^|/)\.",
                          path, re.IGNORECASE))


def decide(found: list[Finding]) -> dict[str, Any] | None:
    """The model block from the strongest tier's majority size (None: no finding)."""
    if not found:
        return None
    tier = min(f.tier for f in found)
    rows = [f for f in found if f.tier == tier]
    votes = Counter(size_of(f.params) for f in rows)
    best = max(votes.values())
    first = rows[0] if TIERS[tier] == README_COUNT else next(
        f for f in rows if votes[size_of(f.params)] == best)
    evidence = f"{TIERS[tier]}: {first.what} (~{_fmt(first.params)} parameters)"
    if len(rows) > 1:
        evidence += " of " + ", ".join(f"{n} {s}" for s, n in sorted(votes.items()))
    return {"size": size_of(first.params), "evidence": evidence, "where": first.where,
            "code": first.code}


def _fmt(params: float) -> str:
    if params >= 1e9:
        return f"{params / 1e9:.3g}B"
    if params >= 1e6:
        return f"{params / 1e6:.3g}M"
    return f"{params / 1e3:.3g}K"


def read_model_size(texts: Mapping[str, str], train_command: str | None,
                    train_files: Iterable[str], train_configs: Iterable[str]
                    ) -> dict[str, Any] | None:
    """{size, evidence, where, code} from the repository's own files, or None."""
    return decide(findings(texts, train_command, train_files, train_configs))
