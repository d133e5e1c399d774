"""Install steps another part of the repository needs are not the training command's (issue 43:
a SLURM launcher's submitit, a serving worker's SGLang, a demo's gradio were read as the
command's environment)."""

from __future__ import annotations

from gpu2tpu.corpus.install_scope import foreign_steps, named_packages

TREE = {
    "train.py": "import torch\nimport model\n",
    "model.py": "import einops\n",
    "serve/worker.py": "import sglang\nif __name__ == '__main__':\n    pass\n",
    "serve/ui.py": "import gradio\n",
    "demo.py": "from serve import ui\nimport einops\nif __name__ == '__main__':\n    ui.run()\n",
    "tools/prepare_data.py": "import skimage\nif __name__ == '__main__':\n    pass\n",
    "setup.py": "import setuptools\n",
}


def _steps(*commands: str) -> list[dict[str, str]]:
    return [{"command": c, "where": "README.md:1"} for c in commands]


def test_only_packages_other_entry_points_import_are_dropped() -> None:
    steps = _steps('pip install "sglang[all]"', "pip install gradio==3.0 einops",
                   "pip install gradio==3.0", "pip install scikit-image", "pip install submitit",
                   "pip install -r requirements.txt", "pip install --upgrade setuptools",
                   "cd serve && pip install -e .")
    # sglang: a serving entry's; gradio alone: what only the demo loads; einops: the model's
    assert foreign_steps(steps, TREE, ["train.py"]) == [0, 2]


def test_named_packages_reads_pip_lines_only() -> None:
    assert named_packages("pip install opencv-python==4.4 PyYAML -i https://x") == ["cv2", "yaml"]
    assert named_packages("pip install -e .") is None
    assert named_packages("pip install git+https://github.com/org/pkg.git") is None
    assert named_packages("conda install pytorch") is None
