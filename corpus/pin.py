"""`gpu2tpu tasks pin`: the ids an upstream task.yaml pins (`source: {repo, commit, tree}`).

The tree id is computed exactly as `upstream.verify_tree` checks it: `tree_id` of the full
`git ls-tree -r` listing (a snapshot's `<id>.tree.tsv`, or the listing git prints for a commit),
and the files are verified against that listing the same way before anything is printed. A
snapshot holds a tree, not its commit id: the commit comes from `--commit` or the corpus record.
"""

from __future__ import annotations

import difflib
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpu2tpu.corpus.records import PROJECTS_DIR
from gpu2tpu.errors import UserError
from gpu2tpu.tasks.sources import (
    SOURCES_ENV,
    Listed,
    Pin,
    SourceError,
    _extract_tar,
    _git,
    _mirror,
    read_listing,
    sources_dir,
    tree_id,
    verify_tree,
)

_LICENCE = re.compile(r"^(licen[cs]e|copying|unlicen[cs]e)([._-].*)?$", re.IGNORECASE)
_GITHUB = re.compile(r"github\.com[:/]+([^/\s]+)/([^/\s]+?)(?:\.git)?/?$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


@dataclass
class Pinned:
    """What `tasks pin` found: the pin, where it came from and what the author should know."""

    pin: Pin
    origin: str  # "snapshot ..." or "git ..."
    commit_from: str  # where the commit id came from
    listed: int  # files in the commit's tree
    packed: int  # of them, present in the source (verified)
    licence_files: list[str]
    licence_spdx: str | None
    notes: list[str] = field(default_factory=list)

    def source_yaml(self) -> str:
        return yaml.safe_dump({"source": {"repo": self.pin.repo, "commit": self.pin.commit,
                                          "tree": self.pin.tree}}, sort_keys=False)

    def render(self) -> str:
        licence = ", ".join(self.licence_files) or "NONE FOUND at the root of the tree"
        if self.licence_spdx:
            licence += f" ({self.licence_spdx} per the corpus record)"
        lines = [f"project  {self.pin.id} ({self.pin.repo})",
                 f"from     {self.origin}: {self.packed} of {self.listed} files present, each "
                 "matching its git blob id",
                 f"commit   {self.pin.commit}  ({self.commit_from})",
                 f"tree     {self.pin.tree}  (git root tree id of the full listing: what "
                 "verification checks)",
                 f"licence  {licence}",
                 *(f"note     {n}" for n in self.notes),
                 "",
                 f"# task.yaml, with task_id: {self.pin.id} (a snapshot is found by the task id)",
                 self.source_yaml().rstrip()]
        return "\n".join(lines)


def record(project_id: str) -> dict[str, Any] | None:
    path = PROJECTS_DIR / f"{project_id}.yaml"
    data = yaml.safe_load(path.read_text()) if path.is_file() else None
    return data if isinstance(data, dict) else None


def licence_files(listing: list[Listed]) -> list[str]:
    return sorted(e.path for e in listing if "/" not in e.path and _LICENCE.match(e.path))


def _spdx(rec: dict[str, Any] | None) -> str | None:
    lic = ((rec or {}).get("scan") or {}).get("licence") or {}
    return str(lic["spdx"]) if isinstance(lic, dict) and lic.get("spdx") else None


def _commit_arg(commit: str | None) -> str | None:
    if commit is not None and not _HEX40.match(commit):
        raise UserError(f"--commit {commit}: not a full 40-hex commit id")
    return commit


def pin_snapshot(project_id: str, sources: Path | None = None, commit: str | None = None,
                 repo: str | None = None) -> Pinned:
    """Pin `<id>.tar.gz` + `<id>.tree.tsv` (or a bare mirror) in the sources directory."""
    base = sources_dir(sources)
    if base is None:
        raise UserError(f"no sources directory: give --sources DIR (a folder of <id>.tar.gz + "
                        f"<id>.tree.tsv snapshots or bare git mirrors) or set ${SOURCES_ENV}; or pin a "
                        "local git checkout instead: gpu2tpu tasks pin PATH --repo OWNER/NAME")
    if not base.is_dir():
        raise UserError(f"sources directory {base} does not exist: give --sources DIR")
    rec = record(project_id)
    commit = _commit_arg(commit) or (str(rec["commit"]) if rec and rec.get("commit") else None)
    repo = repo or (str(rec["repo"]) if rec and rec.get("repo") else project_id.replace("__", "/", 1))
    listing_file, archive = base / f"{project_id}.tree.tsv", base / f"{project_id}.tar.gz"
    probe = Pin(project_id, repo, commit or "", "")
    if not listing_file.is_file() or not archive.is_file():
        mirror = _mirror(base, probe)
        if mirror is not None:
            return pin_git(mirror, commit, repo, project_id,
                           commit_from=None if commit is None else _commit_from(commit, rec, project_id))
        known = sorted(p.name[:-len(".tree.tsv")] for p in base.glob("*.tree.tsv"))
        close = difflib.get_close_matches(project_id, known, n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else \
            (f" (it holds {len(known)}: {', '.join(known[:5])}{', ...' if len(known) > 5 else ''})"
             if known else " (it holds no snapshot)")
        have = "only " + (listing_file.name if listing_file.is_file() else archive.name) \
            if listing_file.is_file() or archive.is_file() else "no snapshot"
        raise UserError(f"{project_id}: {base} has {have} ({project_id}.tar.gz + {project_id}.tree.tsv) "
                        f"and no bare mirror ({repo.replace('/', '+')}){hint}. Pack one, point "
                        "--sources at the folder that has it, or pin a local git checkout: "
                        "gpu2tpu tasks pin PATH")
    if commit is None:
        raise UserError(f"{project_id} has no corpus record (corpus/projects/{project_id}.yaml) to "
                        "take its commit id from, and a snapshot holds only the tree: give --commit "
                        "SHA, the commit the snapshot was packed from")
    listing = read_listing(listing_file)
    pin = Pin(project_id, repo, commit, tree_id(listing))
    omitted_file = base / f"{project_id}.omitted.tsv"
    omitted = {line.split("\t", 1)[0] for line in omitted_file.read_text().splitlines()
               if line.strip()} if omitted_file.is_file() else set()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _extract_tar(archive, root)
        _verify(root, listing, pin, omitted)
        packed = sum(1 for p in root.rglob("*") if p.is_file() or p.is_symlink())
    origin = f"snapshot {archive} (+ {listing_file.name})"
    out = Pinned(pin, origin, _commit_from(commit, rec, project_id) + ": a snapshot holds a tree, "
                 "not its commit", len(listing), packed, licence_files(listing), _spdx(rec))
    out.notes += _notes(listing, omitted)
    out.notes += [f"the licence file {name} is listed but not in the snapshot" for name in
                  out.licence_files if name in omitted]
    return out


def _commit_from(commit: str, rec: dict[str, Any] | None, project_id: str) -> str:
    if rec and rec.get("commit") == commit:
        return f"from the corpus record corpus/projects/{project_id}.yaml"
    return "given with --commit"


def pin_git(path: Path, commit: str | None = None, repo: str | None = None,
            project_id: str | None = None, commit_from: str | None = None) -> Pinned:
    """Pin a commit (default HEAD) of a local git checkout or bare repository."""
    path = path.expanduser().resolve()
    try:
        git_dir = Path(_git(["-C", str(path), "rev-parse", "--absolute-git-dir"]).strip())
        resolved = _git(["--git-dir", str(git_dir), "rev-parse", "--verify", "-q",
                         f"{commit or 'HEAD'}^{{commit}}"]).strip()
        git_tree = _git(["--git-dir", str(git_dir), "rev-parse", f"{resolved}^{{tree}}"]).strip()
    except SourceError as exc:
        what = f"commit {commit}" if commit else "a commit (HEAD)"
        raise UserError(f"{path}: not a git repository with {what} ({exc})") from None
    repo = repo or _origin_repo(git_dir)
    if repo is None:
        raise UserError(f"{path}: no GitHub `origin` remote to name the project by: give --repo "
                        "OWNER/NAME")
    project_id = project_id or repo.replace("/", "__", 1)
    listing = []
    for line in _git(["--git-dir", str(git_dir), "ls-tree", "-r", "--full-tree", resolved]).splitlines():
        if line.strip():
            meta, rel = line.split("\t", 1)
            mode, _kind, sha = meta.split()
            listing.append(Listed(mode, sha, rel))
    pin = Pin(project_id, repo, resolved, tree_id(listing))
    if pin.tree != git_tree:  # the listing must hash to git's own id, or verification would differ
        raise UserError(f"{path}: the listing of {resolved[:12]} hashes to {pin.tree[:12]}, git says "
                        f"{git_tree[:12]}; cannot pin this commit")
    with tempfile.TemporaryDirectory() as tmp:
        tar_path, root = Path(tmp) / "tree.tar", Path(tmp) / "tree"
        root.mkdir()
        _git(["--git-dir", str(git_dir), "archive", "--format=tar", "-o", str(tar_path), resolved])
        _extract_tar(tar_path, root)
        _verify(root, listing, pin, set())
        packed = sum(1 for p in root.rglob("*") if p.is_file() or p.is_symlink())
    rec = record(project_id)
    out = Pinned(pin, f"git {git_dir}", commit_from or ("given with --commit" if commit else
                                                        "HEAD of the repository"),
                 len(listing), packed, licence_files(listing), _spdx(rec))
    if rec and rec.get("commit") and rec["commit"] != resolved:
        out.notes.append(f"the corpus record pins commit {rec['commit']}, not this one")
    if git_dir.name == ".git" and _git(["-C", str(path), "status", "--porcelain"]).strip():
        out.notes.append("the working tree has uncommitted changes: they are not in the pinned commit")
    if (git_dir / "HEAD").is_file() and git_dir.name == ".git":
        out.notes.append(f"a checkout is not a source: give verification a bare mirror, e.g. `git clone "
                         f"--bare {path} SOURCES/{repo.replace('/', '+')}`, and --sources SOURCES")
    return out


def pin_source(what: str, sources: Path | None = None, commit: str | None = None,
               repo: str | None = None) -> Pinned:
    """A corpus id (a snapshot or mirror in the sources directory) or the path of a git repository."""
    path = Path(what).expanduser()
    if path.is_dir() and ((path / ".git").exists() or (path / "HEAD").is_file()):
        return pin_git(path, commit, repo)
    if "/" in what:  # a folder named like a corpus id (e.g. the author's task) is no repository
        hint = f" (the id of {what} is {what.replace('/', '__', 1)})" if what.count("/") == 1 \
            and not path.exists() else ""
        raise UserError(f"{what}: not a git repository (no .git); give a corpus id (OWNER__NAME) "
                        f"with --sources DIR{hint}, or the path of a git checkout")
    return pin_snapshot(what, sources, commit, repo)


def _verify(root: Path, listing: list[Listed], pin: Pin, omitted: set[str]) -> None:
    try:  # the same check as materialise_source, without the task-specific code requirement
        verify_tree(root, listing, pin, omitted, needed_ok=("",))
    except SourceError as exc:
        raise UserError(f"cannot pin {pin.id}: {exc}") from None


def _notes(listing: list[Listed], omitted: set[str]) -> list[str]:
    code = sorted(e.path for e in listing if e.path in omitted and e.path.endswith(".py"))
    if not code:
        return []
    return [f"{len(code)} .py file(s) are not in the snapshot ({', '.join(code[:3])}): verification "
            "refuses the source unless the task's prepare.outputs cover them"]


def _origin_repo(git_dir: Path) -> str | None:
    try:
        url = _git(["--git-dir", str(git_dir), "remote", "get-url", "origin"]).strip()
    except SourceError:
        return None
    match = _GITHUB.search(url)
    return f"{match.group(1)}/{match.group(2)}" if match else None
