"""Where a repository states each dataset's source: the first line that names the dataset and
links it (a README's `[name](url)`, a download script's URL), for the runnability block's data
evidence. Outside reads found the evidence saying only which name rule matched although the
README linked the dataset (UNITER, deepspeech.pytorch, dlrm, hifi-gan, GreaseLM).

A line states a source when it names the dataset (one of its spellings, as a word), says
nothing of models, weights, checkpoints or code it builds on (such lines link a result or a
codebase), and holds a data URL: one in a markdown link whose text names the dataset, or, on a
line that speaks of downloading data, one not in a link named after another of the record's
datasets. A data URL is no paper, badge, pull request or issue, not this repository, and its
file, where it has an extension, is a page or data (an archive, a table, text), never weights or
an image. In documents, sections headed by models or results and results-table rows are
skipped. Markdown files are read first (root READMEs, then others), then shell scripts, then
Python, where only a URL to a data file or a dataset hub counts; within a file, the first such
line wins. Precision over recall: a
source this misses stays "matched 'X'"; one it names wrongly would be a false claim.

After the seventh outside read (scanner 2.10): what a line says of models or code is read per
sentence (ibot's "download the [ImageNet](url) dataset. This codebase ..." states a source); in a
section headed by the dataset alone (ViLT's DATA.md "## SBU"), a line that is only a URL states
its source; a data file's URL that names the dataset in its own path states it on any line
(DALLE-pytorch's `openimages-train-{000000..000554}.tar` in a command); and in Python a torchvision
or torchaudio dataset class built with `download=True` (fast-autoaugment's CIFAR10) states that
the library downloads it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

_URL = re.compile(r"https?://[^\s)\]>\"'`,;]+")
_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")
# what a URL is, when it is not the data's source
_NOT_DATA_HOSTS = re.compile(r"arxiv\.org|doi\.org|paperswithcode|openreview|aclanthology|shields\.io"
                             r"|badge|travis-ci|codecov|colab\.research|pytorch\.org/get-started"
                             r"|youtube\.com|youtu\.be|twitter\.com|wikipedia\.org|readthedocs"
                             r"|codecogs|/pull/|/issues/|/commit/|/blob/.*\.py\b", re.IGNORECASE)
# a line about a result or a codebase, not about data
_NOT_DATA_LINE = re.compile(r"pre-?trained|checkpoint|\bweights?\b|\bmodels?\b|\bbased on\b|\badapt"
                            r"|implementation|codebase|our code|borrowed|\bcite\b|citation", re.IGNORECASE)
_RESULTS = re.compile(r"results?|zoo|benchmark|evaluat|sampl|demo|citation|acknowledg", re.IGNORECASE)
_DATA_LINE = re.compile(r"download|dataset|\bdata\b|corpus|wget|curl|\bget\b", re.IGNORECASE)
_DATA_FILE = re.compile(r"\.(zip|tar|tgz|gz|bz2|xz|7z|rar|txt|csv|tsv|json|jsonl|parquet|arrow|h5"
                        r"|hdf5|npy|mat|lmdb|tfrecords?|html?|php|aspx)$", re.IGNORECASE)
_DATA_HUB = re.compile(r"huggingface\.co/datasets/|kaggle\.com/|zenodo\.org|figshare", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# words a heading about one dataset may hold besides its name ("## SBU", "### CIFAR-10 dataset")
_HEADING_FILLER = re.compile(r"\b(the|and|of|data|datasets?|download(ing)?|prepar(e|ation|ing)|setup"
                             r"|captions?|images?|annotations?|splits?)\b|[#:()\-*`]", re.IGNORECASE)
# a spelling's parts: an upper-case run (not the capital that starts the next word), a word, digits
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\sA-Za-z\d_\-]+")
# dataset classes that fetch their data themselves when built with download=True
_LIBRARY_DATASETS = {
    "torchvision": "CIFAR10|CIFAR100|SVHN|MNIST|FashionMNIST|KMNIST|EMNIST|QMNIST|STL10|CelebA|Omniglot"
                   "|USPS|SEMEION|Caltech101|Caltech256|Flowers102|Food101|StanfordCars|OxfordIIITPet|DTD"
                   "|FGVCAircraft|GTSRB|Places365|VOCSegmentation|VOCDetection|SBDataset|SBU|PhotoTour"
                   "|MovingMNIST|Country211|EuroSAT|PCAM|SUN397|LFWPeople|LFWPairs|WIDERFace|Kitti"
                   "|INaturalist|Imagenette|CLEVRClassification|RenderedSST2|FER2013",
    "torchaudio": "LIBRISPEECH|LIBRITTS|LJSPEECH|SPEECHCOMMANDS|YESNO|GTZAN|VCTK_092|CMUARCTIC|TEDLIUM"
                  "|LibriMix|DR_VCTK|FluentSpeechCommands|MUSDB_HQ|QUESST14|IEMOCAP|Snips",
}
MAX_MARKDOWN_BYTES = 300_000
_TEXT_SUFFIXES = (".md", ".markdown", ".rst", ".txt")


def files_to_read(paths: Iterable[tuple[str, int]]) -> list[str]:
    """Markdown and text documents in the top two levels (data instructions live in them)."""
    out = []
    for path, size in paths:
        p = PurePosixPath(path)
        if p.suffix.lower() in _TEXT_SUFFIXES and len(p.parts) <= 2 and 0 <= size <= MAX_MARKDOWN_BYTES \
                and not p.name.lower().startswith(("requirements", "license", "licence")):
            out.append(path)
    return sorted(out)


def _order(path: str) -> tuple[int, int, str]:
    p = PurePosixPath(path)
    suffix = p.suffix.lower()
    if suffix in _TEXT_SUFFIXES:
        rank = 0 if p.name.lower().startswith("readme") and len(p.parts) == 1 else 1
    else:
        rank = 2 if suffix in (".sh", ".bash") else 3 if suffix == ".py" else 4
    return rank, len(p.parts), path


def spelling_pattern(spelling: str) -> re.Pattern[str]:
    """A dataset spelling as a word, its spaces, hyphens and underscores interchangeable or
    absent, also where its case or a digit starts a part ("LJSpeech" finds "LJ Speech",
    "Common Voice" finds common_voice, "CIFAR10" finds CIFAR-10)."""
    parts = [re.escape(p) for p in _PARTS.findall(spelling)]
    # not followed by a one-letter variant: CIFAR-10 is not CIFAR-10-C (OpenBookQA-V1 is OpenBookQA)
    return re.compile(r"(?<![A-Za-z0-9])" + r"[\s_\-]?".join(parts)
                      + r"(?![A-Za-z0-9]|[\-_][A-Za-z](?![A-Za-z0-9]))", re.IGNORECASE)


def _is_data_url(url: str, repo: str) -> bool:
    if _NOT_DATA_HOSTS.search(url) or (repo and f"github.com/{repo.lower()}" in url.lower()):
        return False
    path = url.split("?")[0].split("#")[0].split("://", 1)[-1].rstrip("/")
    last = path.rsplit("/", 1)[-1]
    return "/" not in path or "." not in last or bool(_DATA_FILE.search(last))


def _blanked(line: str) -> str:
    """The line with its URLs blanked to spaces of the same length (positions kept)."""
    return _URL.sub(lambda m: " " * len(m.group()), line)


def _sentence_of(blanked: str, start: int) -> str:
    """The sentence of the blanked line around position `start`."""
    begin = max((m.end() for m in _SENTENCE_END.finditer(blanked, 0, start)), default=0)
    end = next((m.start() for m in _SENTENCE_END.finditer(blanked, start)), len(blanked))
    return blanked[begin:end]


def _names_in_path(url: str, names: list[re.Pattern[str]]) -> bool:
    """A data file's URL whose own path names the dataset (not a model's or weights' file)."""
    path = url.split("?")[0].split("#")[0].split("://", 1)[-1]
    words = re.sub(r"[/_.\-]+", " ", path)
    return bool(_DATA_FILE.search(path)) and any(n.search(path) for n in names) \
        and not _NOT_DATA_LINE.search(words) and not re.search(r"\.(pth|pt|ckpt|bin)\b", path)


def _bare_url(line: str, repo: str) -> str | None:
    """The line's URL when the line is nothing but a data URL (a section's source under its
    heading)."""
    urls = [u.rstrip(".") for u in _URL.findall(line)]
    if len(urls) == 1 and not _blanked(line).strip(" \t-*<>:") and _is_data_url(urls[0], repo):
        return urls[0]
    return None


def _data_url(line: str, names: list[re.Pattern[str]], others: list[re.Pattern[str]], repo: str,
              code: bool) -> str | None:
    """The URL on this line that is the data's, or None; `others`: the spellings of the record's
    other datasets (a link named after one of them is that one's); `code`: a Python line (a data
    file's URL or a dataset hub's only)."""
    blanked = _blanked(line)
    found = [(m.start(), m.group().rstrip(".")) for m in _URL.finditer(line)]
    urls = [u for at, u in found  # what the URL's own sentence says of models or code
            if _is_data_url(u, repo) and not _NOT_DATA_LINE.search(_sentence_of(blanked, at))]
    if code:
        return next((u for u in urls if _DATA_FILE.search(u.split("?")[0]) or _DATA_HUB.search(u)),
                    None)
    links = [(text, url.rstrip(".")) for text, url in _LINK.findall(line)]
    for text, url in links:  # a link whose text names the dataset first
        if url in urls and any(n.search(text) for n in names):
            return url
    if named := next((u for u in urls if _names_in_path(u, names)), None):
        return named
    if not _DATA_LINE.search(blanked):
        return None
    theirs = {url for text, url in links
              if any(o.search(text) for o in others) and not any(n.search(text) for n in names)}
    return next((u for u in urls if u not in theirs), None)


def _data_lines(path: str, text: str) -> list[tuple[int, str, str]]:
    """(line number, line, the innermost open heading) of the lines that may state a data
    source. In a document, not those of a section whose heading is about models, weights or
    results (pretrained checkpoints are listed per dataset there), nor a table row that does not
    speak of data (results tables link each dataset's model)."""
    rows = text.splitlines()
    if PurePosixPath(path).suffix.lower() not in _TEXT_SUFFIXES:
        return [(i, line, "") for i, line in enumerate(rows, 1)]
    out: list[tuple[int, str, str]] = []
    headings: list[tuple[int, bool, str]] = []  # (level, about models or results, text) of the open sections
    fenced = False
    for i, line in enumerate(rows, 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if stripped.startswith("#") and not fenced:  # a heading (in a code block: a comment)
            level = len(stripped) - len(stripped.lstrip("#"))
            headings = [h for h in headings if h[0] < level]
            about = bool(_NOT_DATA_LINE.search(stripped) or _RESULTS.search(stripped))
            headings.append((level, about, stripped))
            continue
        results_row = stripped.startswith("|") and not _DATA_LINE.search(_URL.sub(" ", stripped))
        if results_row or any(about for _, about, _ in headings):
            continue
        out.append((i, line, headings[-1][2] if headings else ""))
    return out


def _heads(heading: str, spellings: list[re.Pattern[str]]) -> bool:
    """Whether a heading is about this dataset alone ("## SBU", "### CIFAR-10 dataset")."""
    rest = heading
    for s in spellings:
        rest = s.sub(" ", rest)
    return rest != heading and not _HEADING_FILLER.sub(" ", rest).strip()


def _imports(text: str) -> list[tuple[str, str, str]]:
    """(module, name, bound as) for each `from module import name [as alias]` of a file (names
    in parentheses over several lines too) and (module, "", alias) for `import module as alias`."""
    out = []
    for m in re.finditer(r"^\s*from\s+([\w.]+)\s+import\s+(\([^)]*\)|[^\n]+)", text, re.MULTILINE):
        for item in m[2].strip("()").replace("\\\n", " ").split(","):
            if parts := item.split("#")[0].split():
                out.append((m[1], parts[0], parts[-1]))
    for m in re.finditer(r"^\s*import\s+([\w.]+)\s+as\s+(\w+)", text, re.MULTILINE):
        out.append((m[1], "", m[2]))
    return out


def library_downloads(text: str) -> dict[int, tuple[str, str]]:
    """line -> (class, `torchvision.datasets.X with download=True`) for each torchvision or
    torchaudio dataset class a Python file builds with download=True (the library fetches it):
    called through the library's `datasets` module, or by a name the file imports from it and
    from nowhere else (a project's own class of the same name is not the library's)."""
    out: dict[int, tuple[str, str]] = {}
    imports = _imports(text)
    for library, classes in _LIBRARY_DATASETS.items():
        module = f"{library}.datasets"
        qualifiers = {module} | {alias for mod, name, alias in imports
                                 if (mod, name) == (library, "datasets") or (mod == module and not name)}
        bare = {alias for mod, name, alias in imports if mod == module and name}
        bare -= {alias for mod, name, alias in imports if mod != module}
        bare -= set(re.findall(r"^\s*class\s+(\w+)", text, re.MULTILINE))
        for m in re.finditer(rf"(?<![\w.])((?:\w+\.)*)({classes})\s*\(", text):
            qualifier = m[1].rstrip(".")
            if not (qualifier in qualifiers if qualifier else m[2] in bare):
                continue
            call = text[m.end():m.end() + 400].split(")\n", 1)[0]
            if re.search(r"\bdownload\s*=\s*True\b", call):
                out.setdefault(text.count("\n", 0, m.start()) + 1,
                               (m[2], f"{module}.{m[2]} with download=True"))
    return out


def stated_sources(names: Iterable[str], aliases: Mapping[str, list[str]], texts: Mapping[str, str],
                   repo: str = "") -> dict[str, tuple[str, str]]:
    """dataset name -> (path:line, URL) of the first line stating its source, for the names a
    repository states; `aliases`: the catalog's other spellings of each name. For a library's
    download, the URL's place says which class downloads it."""
    order = sorted(texts, key=_order)
    lines = {path: _data_lines(path, texts[path]) for path in order}
    fetched = {path: library_downloads(texts[path]) for path in order if path.endswith(".py")}
    out: dict[str, tuple[str, str]] = {}
    names = list(names)
    patterns = {n: [spelling_pattern(s) for s in [n, *aliases.get(n, [])] if s.strip()] for n in names}

    def source(path: str, i: int, line: str, heading: str, spellings: list[re.Pattern[str]],
               others: list[re.Pattern[str]]) -> str | None:
        if (built := fetched.get(path, {}).get(i)) and any(s.search(built[0]) for s in spellings):
            return built[1]
        if any(s.search(line) for s in spellings) and \
                (url := _data_url(line, spellings, others, repo, path.endswith(".py"))):
            return url
        # under a heading about the dataset alone, a line that is only a URL
        return _bare_url(line, repo) if heading and _heads(heading, spellings) else None

    for name in names:
        spellings = patterns[name]
        others = [p for n in names if n != name for p in patterns[n]]
        found = next(((f"{path}:{i}", url) for path in order for i, line, heading in lines[path]
                      if (url := source(path, i, line, heading, spellings, others))), None)
        if found:
            out[name] = found
    return out


def catalog_spellings(names: Iterable[str]) -> dict[str, list[str]]:
    """Each name's other spellings in the dataset catalog (corpus/datasets.yaml: the entry's name
    and aliases); a name the catalog lacks has none."""
    from gpu2tpu.corpus.data_facts import load_catalog

    catalog, index = load_catalog()
    out = {}
    for name in names:
        entry = index.get(name)
        if entry is not None:
            out[name] = [s for s in [entry, *catalog[entry].get("aliases", [])] if s != name]
    return out
