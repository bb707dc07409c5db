"""A `--data` path that is a symbolic link leading nowhere says so: a link to a missing file names
its target, a loop of links says it is one. Both said `no such file or folder (a relative path is
read from the current folder, ...)`, which sent the user looking for a file that is there."""
import pytest

from npformer.data.text_files import TextFileError, read_corpus


def test_a_dangling_link_names_its_target(tmp_path):
    link = tmp_path / "notes.txt"
    link.symlink_to(tmp_path / "moved" / "notes.txt")
    with pytest.raises(TextFileError, match=f"a symbolic link to '{tmp_path}/moved/notes.txt', which "
                                            f"does not exist; expected a text file"):
        read_corpus([str(link)])


def test_a_loop_of_links_says_so(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(TextFileError, match="which leads back to itself \\(a loop of links\\)"):
        read_corpus([str(a)])


def test_a_missing_path_keeps_its_message(tmp_path):
    with pytest.raises(TextFileError, match="no such file or folder"):
        read_corpus([str(tmp_path / "missing.txt")])
