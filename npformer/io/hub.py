"""Hugging Face GPT-2 and BERT weights, to and from npformer models (numpy only, never pickle).

    model = from_pretrained("path/to/gpt2")          # a folder with config.json + model.safetensors
    model = from_transformers(hf_model)              # an in-memory transformers model
    save_pretrained(model, "out/")                   # the same two files, loadable by transformers
    hf_state = to_hf_state_dict(model)               # {Hugging Face name: array}

The names and configs that map onto ours: npformer.io.hub_mapping.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
from pathlib import Path

import numpy as np

from npformer.guards.rules import is_int
from npformer.guards.validation import check_dtype
from npformer.io.files import (
    check_output_dir,
    check_overwrite,
    clean_stale_temps,
    fsync_dir,
    keep_mode,
    link_new,
    named_os_error,
    temp_name,
)
from npformer.io.hub_checks import check_hf_config, read_json
from npformer.io.hub_mapping import (  # noqa: F401
    ARCHITECTURES,
    FROM_HF_ACT,
    HF_CLASS,
    KINDS,
    TO_HF_ACT,
    config_from_hf,
    hf_config_for,
    hf_to_state,
    kind_from_hf,
    normalise_hf_keys,
    plan,
    state_to_hf,
    tied,
)
from npformer.io.safetensors import read_safetensors, write_safetensors
from npformer.models.config import TransformerConfig


# --------------------------------------------------------------------------------------------------
# folders and in-memory transformers models
# --------------------------------------------------------------------------------------------------
def read_pretrained(folder) -> tuple[dict, dict]:
    """(config.json as a dict, {name: array}) from a Hugging Face model folder, safetensors only
    (model.safetensors, or shards listed in model.safetensors.index.json)."""
    folder = Path(folder)
    cfg_path = folder / "config.json"
    if folder.is_file():
        hint = ("; an npformer checkpoint (.npz) loads with load_model" if folder.suffix == ".npz"
                else "")
        raise NotADirectoryError(f"folder: expected a Hugging Face model folder, got the file "
                                 f"{folder}{hint}")
    if not cfg_path.is_file():
        raise FileNotFoundError(f"folder: expected {cfg_path} (a Hugging Face model folder)")
    hf_config = read_json(cfg_path, "a JSON object (a Hugging Face config)")
    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.is_file():
        return hf_config, read_safetensors(single)
    if index.is_file():
        wmap = read_json(index, 'a JSON object with "weight_map": {tensor: shard file}')
        wmap = wmap.get("weight_map")
        if not isinstance(wmap, dict) or not all(isinstance(v, str) for v in wmap.values()):
            raise ValueError(f"{index}: expected \"weight_map\": {{tensor name: shard file name}}, "
                             f"got {type(wmap).__name__}")
        shards = sorted(set(wmap.values()))
        state = {}
        for s in shards:
            if Path(s).name != s or not s.endswith(".safetensors"):
                raise ValueError(f"{index}: shard names must be plain .safetensors file names, got "
                                 f"{s!r}")
            if not (folder / s).is_file():
                raise FileNotFoundError(f"{index}: lists shard {s!r}, which is not a file in "
                                        f"{folder}")
            state.update(read_safetensors(folder / s))
        return hf_config, state
    other = sorted(p.name for p in folder.glob("*.bin")) + sorted(p.name for p in folder.glob("*.pt"))
    raise FileNotFoundError(f"folder: expected model.safetensors in {folder}" + (
        f"; found {other}, which are pickle files and are never loaded here (convert them with "
        f"transformers: model.save_pretrained(folder, safe_serialization=True))" if other else ""))


def hf_model_parts(hf_model) -> tuple[dict, dict, str]:
    """(config dict, {name: numpy array}, class name) of an in-memory transformers model."""
    state = {k: v.detach().cpu().numpy() for k, v in hf_model.state_dict().items()}
    return hf_model.config.to_dict(), state, type(hf_model).__name__


def kind_of(model) -> str:
    name = type(model).__name__
    for kind, cls in KINDS.items():
        if cls == name:
            return kind
    raise TypeError(f"model: expected one of {sorted(KINDS.values())}, got {name}")


def _build(kind: str, c: TransformerConfig, state: dict):
    import importlib

    module = {"gpt2": "models.causal_lm"}.get(kind, "models.bert")
    model = getattr(importlib.import_module(f"npformer.{module}"), KINDS[kind])(c)
    model.load_state_dict(state)
    return model.eval()


def pretrained_parts(folder, dtype="float32", kind: str | None = None,
                     num_labels: int | None = None, seed: int = 0):
    """(kind, our config, our state dict, HF names newly initialised) of a Hugging Face folder, for
    either twin. kind="bert_cls" on a folder without a classifier (BertModel, BertForMaskedLM,
    BertForPreTraining: what bert-base-uncased is) adds a fresh head drawn from `seed`
    (npformer.io.hub_heads), with `num_labels` classes (default: config.json's, else 2)."""
    if not isinstance(folder, (str, os.PathLike)) or isinstance(folder, bytes):
        raise TypeError(f"folder: expected a folder path (str or os.PathLike), got "
                        f"{type(folder).__name__}")               # was pathlib's own message
    if kind and kind not in KINDS:
        raise ValueError(f"kind: expected one of {sorted(KINDS)}, got {kind!r}")
    dtype = check_dtype("dtype", dtype).name           # the arguments before the files
    if num_labels is not None:
        if not is_int(num_labels) or num_labels < 1:
            raise ValueError(f"num_labels: expected an int >= 1, got {num_labels!r}")
        num_labels = int(num_labels)
    if not is_int(seed) or seed < 0:
        raise ValueError(f"seed: expected an int >= 0, got {seed!r}")
    seed = int(seed)
    hf_config, hf_state = read_pretrained(folder)
    check_hf_config(hf_config, Path(folder) / "config.json")
    try:
        return _parts(folder, hf_config, hf_state, dtype, kind, num_labels, seed)
    except ValueError as e:      # the loader's own refusals of what the files say: name the folder
        if str(folder) in str(e):
            raise
        raise ValueError(f"{folder}: {e}") from None


def _parts(folder, hf_config: dict, hf_state: dict, dtype, kind, num_labels, seed):
    own = kind_from_hf(hf_config)
    kind = kind or own
    new: list[str] = []
    if num_labels is not None and kind != "bert_cls":
        raise ValueError(f"num_labels: only with kind='bert_cls' (a classifier), got kind={kind!r}")
    if kind == "bert_cls" and own != "bert_cls":
        from npformer.io.hub_heads import fresh_head_state
        labels = num_labels if num_labels is not None else (hf_config.get("num_labels")
                                                          or len(hf_config.get("id2label") or {}) or 2)
        hf_config = {k: v for k, v in hf_config.items() if k not in ("id2label", "label2id")}
        hf_config["num_labels"] = labels
        hf_state, new = fresh_head_state(hf_config, hf_state, labels, seed)
    c = config_from_hf(hf_config, kind, dtype)
    if num_labels is not None and c.num_classes != num_labels:
        raise ValueError(f"num_labels: {folder} holds a trained classifier with {c.num_classes} "
                         f"classes, got num_labels={num_labels} (load it without num_labels, or "
                         f"load its encoder with kind='bert_mlm' or 'bert')")
    return kind, c, hf_to_state(kind, c, hf_state)[0], new


def warn_new_weights(folder, new: list[str], seed: int) -> None:
    """The line transformers prints for a fresh head, as a UserWarning naming the weights."""
    if new:
        import warnings
        warnings.warn(f"{folder}: these weights are not in the folder and were newly initialized "
                      f"(seed {seed}): {', '.join(new)}; train the model before using its "
                      f"predictions", UserWarning, stacklevel=3)


def from_pretrained(folder, dtype="float32", kind: str | None = None,
                    num_labels: int | None = None, seed: int = 0):
    """An npformer model (eval mode) from a Hugging Face folder (config.json + model.safetensors).
    kind ("gpt2", "bert", "bert_mlm", "bert_cls") overrides what config.json's architectures say;
    kind="bert_cls" on a pre-training or masked-LM folder gives a classifier whose new head
    (classifier, and the pooler where the folder has none) is drawn from `seed`, with a
    UserWarning naming those weights; the model's `new_weights` lists them too."""
    kind, c, state, new = pretrained_parts(folder, dtype, kind, num_labels, seed)
    model = _build(kind, c, state)
    model.new_weights = new
    warn_new_weights(folder, new, seed)
    return model


def from_transformers(hf_model, dtype="float32"):
    """An npformer model (eval mode) holding the weights of an in-memory transformers model."""
    hf_config, hf_state, cls = hf_model_parts(hf_model)
    kind = kind_from_hf(hf_config, cls)
    c = config_from_hf(hf_config, kind, dtype)
    return _build(kind, c, hf_to_state(kind, c, hf_state)[0])


def to_hf_state_dict(model) -> dict:
    """{Hugging Face name: numpy array} of an npformer (or torchformer) GPT-2/BERT model."""
    kind = kind_of(model)
    sd = model.state_dict()
    sd = {k: (v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v))
          for k, v in sd.items()}
    return state_to_hf(kind, model.config, sd)


def _place(tmp: Path, path: Path, overwrite: bool) -> None:
    """The complete file `tmp` under the name `path`: renamed over an earlier file with `overwrite`,
    else linked, which fails (FileExistsError) when a file appeared at `path` since the checks."""
    if overwrite:
        keep_mode(tmp, path)
        os.replace(tmp, path)
    else:
        link_new(tmp, path)
        if tmp.exists():                                 # (a rename where links are not supported)
            tmp.unlink()


def save_pretrained(model, folder, overwrite: bool = False,
                    extra_files: dict[str, bytes] | None = None, remove: tuple[str, ...] = ()) -> Path:
    """Write config.json and model.safetensors (Hugging Face names; tied duplicates left out, as
    transformers does) into `folder`, with `extra_files` ({file name: contents}, a tokenizer's files)
    beside them. Existing files are replaced only with overwrite=True; every path is checked before
    anything is written, and every file is complete on disk before the first one replaces its
    predecessor, so a failure or an interruption leaves the earlier folder as it was.
    `remove` (with overwrite=True): names of an earlier save's files this one does not write (a
    tokenizer_config.json the new tokenizer has none of), deleted once the new files are in place,
    so the folder never pairs the new model with them."""
    kind = kind_of(model)
    if not isinstance(folder, (str, os.PathLike)) or isinstance(folder, bytes):
        raise TypeError(f"folder: expected a folder path (str or os.PathLike), got "
                        f"{type(folder).__name__}")
    folder = Path(folder)
    overwrite = check_overwrite(overwrite)
    hf_config = hf_config_for(kind, model.config)
    extra = dict(extra_files or {})
    for name, data in extra.items():
        if not isinstance(name, str) or Path(name).name != name or name in ("", ".", ".."):
            raise ValueError(f"extra_files: expected plain file names, got {name!r}")
        if name in ("config.json", "model.safetensors"):
            raise ValueError(f"extra_files: {name!r} is written by save_pretrained itself (from the "
                             f"model); expected other files (a tokenizer's)")
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"extra_files[{name!r}]: expected bytes, got {type(data).__name__}")
    for name in remove:
        if not isinstance(name, str) or Path(name).name != name or name in ("", ".", "..") \
                or name in ("config.json", "model.safetensors", *extra):
            raise ValueError(f"remove: expected plain names of files this save does not write, got "
                             f"{name!r}")
    if remove and not overwrite:
        raise ValueError("remove: deletes an earlier save's files; only with overwrite=True")
    files = (folder / "model.safetensors", folder / "config.json", *(folder / n for n in extra))
    existing = [str(p) for p in files if p.exists()]
    if existing and not overwrite:
        raise FileExistsError(f"folder: {existing} exist; pass overwrite=True to replace them")
    check_output_dir(folder, "folder")                  # a file there, no permission: named
    state = to_hf_state_dict(model)
    for d in tied(kind, model.config):
        state.pop(d, None)
    contents = [json.dumps(hf_config, indent=2).encode("utf-8"), *extra.values()]
    temps: list[Path] = []                               # this process and thread's own
    placed: list[Path] = []                              # names given to the new files so far
    replacing = False
    try:
        for path in files:
            clean_stale_temps(folder, path.name)         # left by a writer killed with kill -9
        temps.append(temp_name(files[0]))
        write_safetensors(temps[0], state, {"format": "pt"}, overwrite=True)    # fsynced
        for path, data in zip(files[1:], contents):
            temps.append(temp_name(path))                # as any new file: the umask's mode
            with open(temps[-1], "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        replacing = True                                 # from here on: all files, never some
        for tmp, path in zip(temps, files):
            _place(tmp, path, overwrite)
            placed.append(path)
        for name in remove:                              # the earlier save's, not this one's
            with contextlib.suppress(FileNotFoundError):
                (folder / name).unlink()
        fsync_dir(folder)
    except BaseException as e:
        taken = isinstance(e, FileExistsError) and replacing
        for path in placed if taken else ():             # a file written meanwhile: none of ours
            with contextlib.suppress(OSError):
                path.unlink()
        finish = replacing and not isinstance(e, OSError)    # Ctrl-C between two renames
        for t, path in zip(temps, files):
            if t.exists() and finish and path not in placed:
                with contextlib.suppress(FileExistsError):
                    _place(t, path, overwrite)
            if t.exists():
                t.unlink()
        if finish:
            fsync_dir(folder)
        if not isinstance(e, OSError):
            raise
        if taken:
            raise FileExistsError(errno.EEXIST, f"{files[len(placed)].name} was written by another program "
                                  f"while the folder was saved, and is left as it is; nothing was "
                                  f"written (overwrite=True replaces it)", str(folder)) from None
        kept = ("the earlier files there are unchanged" if existing else "nothing was written")
        raise named_os_error(e, folder, kept) from None
    return folder
