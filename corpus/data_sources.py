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
source this misses stays "matched 'X'"; one it names wrongly would be a false claim."""

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
# a spelling's parts: an upper-case run (not the capital that starts the next word), a word, digits
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+|[^\sA-Za-z\d_\-]+")
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


def _data_url(line: str, names: list[re.Pattern[str]], others: list[re.Pattern[str]], repo: str,
              code: bool) -> str | None:
    """The URL on this line that is the data's, or None; `others`: the spellings of the record's
    other datasets (a link named after one of them is that one's); `code`: a Python line (a data
    file's URL or a dataset hub's only)."""
    prose = _URL.sub(" ", line)
    if _NOT_DATA_LINE.search(prose):
        return None
    urls = [u for u in (u.rstrip(".") for u in _URL.findall(line)) if _is_data_url(u, repo)]
    if code:
        return next((u for u in urls if _DATA_FILE.search(u.split("?")[0]) or _DATA_HUB.search(u)),
                    None)
    links = [(text, url.rstrip(".")) for text, url in _LINK.findall(line)]
    for text, url in links:  # a link whose text names the dataset first
        if url in urls and any(n.search(text) for n in names):
            return url
    if not _DATA_LINE.search(prose):
        return None
    theirs = {url for text, url in links
              if any(o.search(text) for o in others) and not any(n.search(text) for n in names)}
    return next((u for u in urls if u not in theirs), None)


def _data_lines(path: str, text: str) -> list[tuple[int, str]]:
    """(line number, line) of the lines that may state a data source. In a document, not those
    of a section whose heading is about models, weights or results (pretrained checkpoints are
    listed per dataset there), nor a table row that does not speak of data (results tables link
    each dataset's model)."""
    rows = text.splitlines()
    if PurePosixPath(path).suffix.lower() not in _TEXT_SUFFIXES:
        return list(enumerate(rows, 1))
    out: list[tuple[int, str]] = []
    headings: list[tuple[int, bool]] = []  # (level, about models or results) of the open sections
    fenced = False
    for i, line in enumerate(rows, 1):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if stripped.startswith("#") and not fenced:  # a heading (in a code block: a comment)
            level = len(stripped) - len(stripped.lstrip("#"))
            headings = [h for h in headings if h[0] < level]
            headings.append((level, bool(_NOT_DATA_LINE.search(stripped) or _RESULTS.search(stripped))))
            continue
        results_row = stripped.startswith("|") and not _DATA_LINE.search(_URL.sub(" ", stripped))
        if results_row or any(about for _, about in headings):
            continue
        out.append((i, line))
    return out


def stated_sources(names: Iterable[str], aliases: Mapping[str, list[str]], texts: Mapping[str, str],
                   repo: str = "") -> dict[str, tuple[str, str]]:
    """dataset name -> (path:line, URL) of the first line stating its source, for the names a
    repository states; `aliases`: the catalog's other spellings of each name."""
    order = sorted(texts, key=_order)
    lines = {path: _data_lines(path, texts[path]) for path in order}
    out: dict[str, tuple[str, str]] = {}
    names = list(names)
    patterns = {n: [spelling_pattern(s) for s in [n, *aliases.get(n, [])] if s.strip()] for n in names}
    for name in names:
        spellings = patterns[name]
        others = [p for n in names if n != name for p in patterns[n]]
        found = next(((f"{path}:{i}", url) for path in order
                      for i, line in lines[path]
                      if any(s.search(line) for s in spellings)
                      and (url := _data_url(line, spellings, others, repo, path.endswith(".py")))),
                     None)
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
