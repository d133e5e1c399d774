"""Where a repository states each dataset's source (corpus/data_sources.py): the lines outside
reads cited, and the lines that link a result or a codebase beside a dataset's name."""

from __future__ import annotations

from corpus_helpers import MIT, commit_files

from gpu2tpu.corpus.data_sources import files_to_read, spelling_pattern, stated_sources
from gpu2tpu.corpus.scanner import scan_path

README = """# Project
Download and extract the [LJ Speech dataset](https://keithito.com/LJ-Speech-Dataset/).
We provide a CelebA 64x64 model [here](https://drive.google.com/file/d/abc/view), trained on CelebA.
We adapt main.py in [[link]](https://github.com/pytorch/examples/tree/master/mnist) for MNIST.
See our paper on CIFAR-10 ([arXiv](https://arxiv.org/abs/1234.5678)).
| CIFAR-10 | 95.1 | [weights](https://example.org/cifar.pth) |
"""
DOWNLOAD = """#!/bin/sh
# Criteo Kaggle display advertising challenge
wget https://example.org/criteo/dac.tar.gz  # Criteo
wget http://example.org/mnist.True.3.best.pixel  # MNIST
"""
CODE = """URL = "https://example.org/get/mnist"  # MNIST page
TRAIN = "https://raw.example.org/ilpc2022/train.txt"  # ILPC2022 split
"""


def test_a_linked_or_downloaded_dataset_gets_its_line_and_url() -> None:
    texts = {"README.md": README, "scripts/get.sh": DOWNLOAD, "data/urls.py": CODE}
    got = stated_sources(["LJSpeech", "Criteo Kaggle", "ILPC2022"], {"Criteo Kaggle": ["Criteo"]},
                         texts, repo="owner/project")
    assert got == {"LJSpeech": ("README.md:2", "https://keithito.com/LJ-Speech-Dataset/"),
                   "Criteo Kaggle": ("scripts/get.sh:3", "https://example.org/criteo/dac.tar.gz"),
                   "ILPC2022": ("data/urls.py:2", "https://raw.example.org/ilpc2022/train.txt")}


def test_a_result_a_codebase_a_paper_or_weights_beside_the_name_is_no_source() -> None:
    """Lines from the projects themselves: ddim links a CelebA model, TRADES the code it adapts,
    ssl_bad_gan's wget fetches a model file; a paper and a weights file are never the data."""
    texts = {"README.md": README, "scripts/get.sh": DOWNLOAD, "data/urls.py": CODE}
    assert stated_sources(["CelebA", "MNIST", "CIFAR-10"], {}, texts) == {}


def test_spellings_and_the_documents_read() -> None:
    lj = spelling_pattern("LJ Speech")
    assert lj.search("the LJSpeech-1.1 folder") and lj.search("lj_speech") and not lj.search("LJSpeechy")
    assert spelling_pattern("LJSpeech").search("the LJ Speech dataset")
    assert spelling_pattern("CIFAR10").search("CIFAR-10") and spelling_pattern("Multi30k").search("multi30k")
    refcoco_plus = spelling_pattern("RefCOCO+")
    assert refcoco_plus.search("RefCOCO+") and not refcoco_plus.search("RefCOCOg")
    assert files_to_read([("README.md", 10), ("docs/DATASET.md", 10), ("a/b/c.md", 10),
                          ("requirements.txt", 10), ("big.md", 10**7)]) == ["README.md", "docs/DATASET.md"]


def test_the_scan_cites_the_line_in_the_data_evidence(tmp_path) -> None:
    commit_files(tmp_path / "r", {"LICENSE": MIT, "README.md": README, "train.py": "import torch\n"})
    scan = scan_path(tmp_path / "r", curated={"datasets": ["LJSpeech", "CelebA"], "task": "tts"})
    evidence = {d["name"]: d["evidence"] for d in scan["runnability"]["data"]}
    assert evidence["LJSpeech"] == ("matched 'LJSpeech'; the repository gives its source at "
                                    "README.md:2: https://keithito.com/LJ-Speech-Dataset/")
    assert evidence["CelebA"] == "matched 'CelebA'"


def test_sections_about_models_and_results_tables_are_not_read_for_data() -> None:
    """taming-transformers lists a checkpoint per dataset under "Running pretrained models";
    dlrm's "# of interactions" is a comment in a code block, not a heading, and "The code
    supports interface with the [Criteo ... Dataset](url)" states the data's source."""
    readme = """## Running pretrained models
### FFHQ
Download the [ffhq_transformer](https://k00.fr/abc) folder.
## Data
| FFHQ | 9.6 | [link](https://example.org/ffhq-results) |
```
# of interactions
```
The code supports interface with the [Criteo Terabyte Dataset](https://labs.example.com/terabyte/).
Get [FFHQ](https://github.com/NVlabs/ffhq-dataset) from its page.
"""
    got = stated_sources(["FFHQ", "Criteo Terabyte"], {}, {"README.md": readme})
    assert got == {"FFHQ": ("README.md:10", "https://github.com/NVlabs/ffhq-dataset"),
                   "Criteo Terabyte": ("README.md:9", "https://labs.example.com/terabyte/")}


def test_the_seventh_reads_sources_a_sentence_a_section_a_data_file_and_a_library() -> None:
    """Shapes of the lines the seventh outside read cited: ibot's INSTALL.md (a link beside a
    sentence about the codebase), ViLT's DATA.md (a bare URL under "## SBU"), DALLE-pytorch's
    streamed shards (a .tar URL naming OpenImages in a command) and fast-autoaugment's
    torchvision CIFAR10 built with download=True."""
    install = ("Install it and download the [ImageNet](https://imagenet.example.org/) dataset. "
               "This codebase was developed with PyTorch 1.7.\n")
    data = """# Dataset Preparation
## SBU
http://www.example.edu/sbucaptions/

## Results on SBU
https://example.org/sbu-table
"""
    readme = """Stream the shards:
$ python train.py --folder "http://storage.example.com/openimages-train-{000000..000554}.tar"
Our model: https://example.org/openimages_pretrained.tar
"""
    code = """import torchvision
train = torchvision.datasets.CIFAR10(root=dataroot, train=True,
                                     download=True, transform=None)
test = torchvision.datasets.SVHN(root=dataroot, split='test', download=False)
"""
    texts = {"INSTALL.md": install, "DATA.md": data, "README.md": readme, "data.py": code}
    # the alias "SBU Captions" names the dataset inside the bare URL itself: the heading still holds
    got = stated_sources(["ImageNet", "SBU", "OpenImages", "CIFAR-10", "SVHN"], {"SBU": ["SBU Captions"]},
                         texts)
    assert got == {
        "ImageNet": ("INSTALL.md:1", "https://imagenet.example.org/"),
        "SBU": ("DATA.md:3", "http://www.example.edu/sbucaptions/"),
        "OpenImages": ("README.md:2", "http://storage.example.com/openimages-train-{000000..000554}.tar"),
        "CIFAR-10": ("data.py:2", "torchvision.datasets.CIFAR10 with download=True"),
    }  # SVHN: built with download=False, no source stated


def test_a_bare_url_under_a_heading_about_more_than_the_dataset_is_no_source() -> None:
    data = "## Training on CIFAR-10 with our augmentations\nhttps://example.org/notes\n"
    assert stated_sources(["CIFAR-10"], {}, {"README.md": data}) == {}
    # a class of the library's name that the file imports from the project is the project's own
    # (ddim's datasets/__init__.py: CIFAR10 from torchvision, CelebA from datasets/celeba.py)
    code = ("from torchvision.datasets import CIFAR10\nfrom datasets.celeba import CelebA\n"
            "a = CelebA(root, download=True)\nb = CIFAR10(root, train=True, download=True)\n")
    assert stated_sources(["CIFAR-10", "CelebA"], {}, {"data/__init__.py": code}) == {
        "CIFAR-10": ("data/__init__.py:4", "torchvision.datasets.CIFAR10 with download=True")}
    aliased = "from torchvision import datasets as dsets\nd = dsets.MNIST('.', download=True)\n"
    assert stated_sources(["MNIST"], {}, {"data.py": aliased}) == {
        "MNIST": ("data.py:2", "torchvision.datasets.MNIST with download=True")}
    # a checkpoint's archive named after the dataset is no source
    weights = "Our run: https://example.org/openimages_pretrained.tar and https://example.org/openimages.pth.tar\n"
    assert stated_sources(["OpenImages"], {}, {"README.md": weights}) == {}
