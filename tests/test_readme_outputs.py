"""What a newcomer's commands leave behind and need: every file the README's and the text docs'
commands write in the repository root, and the GPT-2 folder notebook 5 reads, is ignored by git (so
`git add -A` never commits a checkpoint or hundreds of MB of weights); the download command the
walk-through quotes names a program the `[hf]` extra installs."""
from __future__ import annotations

import re
import shutil
import subprocess
from importlib import metadata

import pytest

from tests.paths import ROOT

PAGES = ["README.md", "docs/TEXT.md", "docs/LANGUAGE_MODELS.md", "docs/GPT2_BERT.md"]
# an option that names a file or folder a command writes, the README's save_checkpoint line, and a
# shell redirection into a file (`python -c "..." > pairs.tsv`; not an arrow such as `source -> target`)
WRITES = re.compile(r'(?:--save|--out|-o|--results|--plot)[ =]([^\s`\]|)"]+)|save_checkpoint\("([^"]+)"'
                    r'|(?<![-=])> ([\w-]+\.[a-z]+)\b')
PLACEHOLDER = re.compile(r"^[A-Z_]+$|/")                    # DIR, FILE; a path into another folder


def written_paths() -> list[str]:
    found = []
    for page in PAGES:
        for m in WRITES.finditer((ROOT / page).read_text(encoding="utf-8")):
            path = (m.group(1) or m.group(2) or m.group(3)).rstrip("/")
            if not PLACEHOLDER.search(path) and path not in found:
                found.append(path)
    return found


def ignored(path: str) -> bool:
    """`path`, as a file or as a folder holding a file (git cannot tell which one a missing path is)."""
    for candidate in (path, f"{path}/results.json"):
        if subprocess.run(["git", "check-ignore", "-q", "--no-index", candidate], cwd=ROOT).returncode == 0:
            return True
    return False


@pytest.fixture(scope="module")
def git_checkout():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a checkout")


def test_the_docs_name_files_their_commands_write():
    paths = written_paths()
    for expected in ("ckpt.npz", "run2.npz", "model.npz", "docs-lm.npz", "mt.npz", "grades", "pairs.tsv",
                     "labelled.tsv"):
        assert expected in paths, (expected, paths)


def test_every_file_the_docs_commands_write_at_the_root_is_ignored(git_checkout):
    missed = [p for p in written_paths() if not ignored(p)]
    assert not missed, f".gitignore does not cover what the docs' commands write: {missed}"


def test_the_gpt2_folder_of_notebook_5_is_ignored(git_checkout):
    assert ignored("examples/gpt2/model.safetensors")


DOWNLOAD = re.compile(r"`([\w.-]+) download ([^`]*)`")


def test_the_quoted_download_command_is_a_program_the_hf_extra_installs():
    pytest.importorskip("huggingface_hub", reason="the [hf] extra is not installed")
    scripts = {e.name for e in metadata.distribution("huggingface_hub").entry_points
               if e.group == "console_scripts"}
    quoted = [(page, m.group(1), m.group(2))
              for page in ["examples/05_gpt2_and_bert_in_numpy.py", "docs/GPT2_BERT.md"]
              for m in DOWNLOAD.finditer((ROOT / page).read_text(encoding="utf-8"))]
    assert quoted
    for page, program, rest in quoted:
        assert program in scripts, f"{page}: `{program} download` is not a command of huggingface_hub " \
                                   f"{metadata.version('huggingface_hub')} (it has {sorted(scripts)})"
        assert "--local-dir" in rest and "model.safetensors" in rest, (page, rest)


SAVED = re.compile(r'--save[ =]([\w.-]+\.npz)|save_checkpoint\("([^"]+)"')
READ = re.compile(r"npformer (?:generate|evaluate|plot) ([\w.-]+\.npz)|--resume ([\w.-]+\.npz)")


@pytest.mark.parametrize("page", PAGES)
def test_every_checkpoint_a_page_reads_is_one_its_commands_save(page):
    """A newcomer who runs a page's train line and then its generate line finds the file there: each
    checkpoint a page's generate, evaluate, plot or --resume reads is written by one of its --save
    (an upper-case name such as LM.npz is a placeholder)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    saved = {a or b for a, b in SAVED.findall(text)}
    read = {a or b for a, b in READ.findall(text)}
    unsaved = sorted(p for p in read - saved if not p[:-4].isupper())
    assert not unsaved, f"{page} reads {unsaved}, which none of its commands saves (--save)"
