"""A plot command that fails part way (a full disk) leaves the plot folder as it found it.

Each picture is written atomically, but a set is written one picture at a time: a write that fails
on the third picture kept the first two, and the next run into that folder was refused until
`--overwrite` ("holds loss.png"). `new_plots_removed_on_failure` removes the pictures the failed
run added (never one that was there before) and turns the error into one line naming the option.
"""
from __future__ import annotations

import contextlib
import os
from typing import Iterator


@contextlib.contextmanager
def new_plots_removed_on_failure(folder: str, option: str, overwrite: bool = False) -> Iterator[None]:
    """On an exception out of the block, delete the plots it added to `folder` (never a file another
    program wrote there meanwhile); an OSError (a full disk, a folder that went away) becomes an
    OutputPathError naming `option`. Without `overwrite`, a picture whose name another program took
    since the folder was checked is kept, and the set fails as a whole."""
    from npformer.io.files import OutputPathError
    from npformer.training.plot_files import plots_in, writing

    before = set(plots_in(folder))
    with writing(replace=overwrite) as written:
        try:
            yield
        except BaseException as e:
            ours = {os.path.basename(p) for p in written}
            for name in (set(plots_in(folder)) - before) & ours:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, name))
            if isinstance(e, FileExistsError):
                name = os.path.basename(e.filename or "") or "a picture"
                raise OutputPathError(option, folder, f"{name} was written by another program "
                                                      f"while this one worked, and is left as it "
                                                      f"is; the plots this run had added were "
                                                      f"removed (--overwrite replaces them)") from None
            if isinstance(e, OSError):
                where = f" ({e.filename})" if getattr(e, "filename", None) else ""
                raise OutputPathError(option, folder, f"write failed: {e.strerror or e}{where}; the "
                                                      f"plots this run had added were removed") from None
            raise
