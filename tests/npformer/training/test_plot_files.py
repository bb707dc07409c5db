"""npformer.training.plot_files: inside `writing(replace=False)` a picture never replaces a file that
is not its own, redraws its own, and lists what it wrote; outside, save_png replaces (savefig's way)."""
import pytest

from npformer.training import plot_files

plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture
def fig():
    f = plt.figure(figsize=(1, 1))
    yield f
    plt.close(f)


def test_keeps_a_file_that_is_not_its_own_and_redraws_its_own(tmp_path, fig):
    theirs, ours = tmp_path / "loss.png", tmp_path / "positions.png"
    theirs.write_bytes(b"theirs")
    with plot_files.writing(replace=False) as written:
        plot_files.save_png(fig, str(ours))
        plot_files.save_png(fig, str(ours))                        # a redraw of its own picture
        with pytest.raises(FileExistsError) as err:
            plot_files.save_png(fig, str(theirs))
    assert err.value.filename == str(theirs)
    assert theirs.read_bytes() == b"theirs"
    assert written == [str(ours), str(ours)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["loss.png", "positions.png"]


def test_replaces_with_replace_and_outside_a_block(tmp_path, fig):
    path = tmp_path / "loss.png"
    path.write_bytes(b"earlier")
    with plot_files.writing(replace=True) as written:
        plot_files.save_png(fig, str(path))
    assert written == [str(path)] and path.read_bytes().startswith(b"\x89PNG")
    path.write_bytes(b"earlier")
    plot_files.save_png(fig, str(path))
    assert path.read_bytes().startswith(b"\x89PNG")
