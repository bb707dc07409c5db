"""The loader checks every entry's declared size and shape before reading: a crafted header declaring
128 TiB and a 2 GiB deflate bomb (both built here) are refused with their own errors, fast, and
without allocating what they declare."""
import struct
import time
import tracemalloc
import zipfile
import zlib

import pytest

from npformer.io import checkpoint as ck
from npformer.models.config import TransformerConfig
from npformer.models.transformer import Transformer


def tiny_checkpoint(tmp_path):
    cfg = TransformerConfig(d_model=8, num_heads=2, d_ff=8, num_encoder_layers=1,
                            num_decoder_layers=1, vocab_size=8, max_len=6)
    return ck.save_checkpoint(tmp_path / "ok.npz", Transformer(cfg))


def npy_header(shape, dtype="<f4") -> bytes:
    """A version 1.0 .npy header declaring `shape` (padded to 64 bytes as numpy writes it)."""
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (dtype, tuple(shape))
    body = d.encode("latin1")
    pad = 64 - (10 + len(body) + 1) % 64
    body += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(body)) + body


def write_zip(path, members):
    """A zip from (name, raw bytes as stored, method, crc, uncompressed size) tuples, written by hand
    so that the declared sizes can be anything."""
    out, central = bytearray(), bytearray()
    for name, raw, method, crc, usize in members:
        n = name.encode()
        off = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(raw), usize,
                           len(n), 0) + n + raw
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0, crc,
                               len(raw), usize, len(n), 0, 0, 0, 0, 0, off) + n
    cd_off = len(out)
    out += central + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                                 len(central), cd_off, 0)
    path.write_bytes(bytes(out))
    return path


def members_of(path):
    """The members of a real checkpoint, as stored (name, raw, method, crc, size)."""
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i), 0, i.CRC, i.file_size) for i in z.infolist()]


def replace(members, name, new):
    return [new if m[0] == name else m for m in members]


def timed_refusal(path, match):
    tracemalloc.start()
    t = time.perf_counter()
    with pytest.raises(ck.CheckpointError, match=match):
        ck.load_checkpoint(path)
    took = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert took < 0.5, took
    assert peak < 50 << 20, peak                      # nothing near what was declared
    return took


def test_header_declaring_128_tib_is_refused_fast(tmp_path):
    ok = tiny_checkpoint(tmp_path)
    name = "model/src_embed.weight.npy"
    # 150 KiB of data under a header that declares 2**45 float32 = 128 TiB
    raw = npy_header((2 ** 45,)) + bytes(150 * 1024)
    bad = write_zip(tmp_path / "huge.npz", replace(members_of(ok), name,
                                                   (name, raw, 0, zlib.crc32(raw), len(raw))))
    assert bad.stat().st_size < 200 * 1024
    timed_refusal(bad, r"'model/src_embed.weight' declares shape \(35184372088832,\).*128\.0 TiB"
                       r".*refused before reading")


def deflated_zeros(header: bytes, n_chunks: int, chunk: int = 64 << 20) -> bytes:
    """Raw deflate of header + n_chunks * chunk zero bytes, built from one compressed chunk (each
    full flush resets the window, so every zero chunk compresses to the same bytes)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = c.compress(header) + c.flush(zlib.Z_FULL_FLUSH)
    one = c.compress(bytes(chunk)) + c.flush(zlib.Z_FULL_FLUSH)
    return head + one * n_chunks + c.flush(zlib.Z_FINISH)


def test_deflated_zeros_helper_is_a_real_stream():
    raw = deflated_zeros(npy_header((3 * (1 << 16) // 4,)), 3, chunk=1 << 16)
    data = zlib.decompress(raw, -15)
    assert data[:6] == b"\x93NUMPY" and len(data) == 128 + 3 * (1 << 16) and not any(data[128:])


def test_two_gib_deflate_bomb_is_refused_fast(tmp_path):
    ok = tiny_checkpoint(tmp_path)
    name = "model/src_embed.weight.npy"
    header = npy_header((1 << 29,))                  # 2**29 float32 = 2 GiB, consistent with the zip
    raw = deflated_zeros(header, 32)                 # 32 x 64 MiB of zeros
    usize = len(header) + (2 << 30)
    assert len(raw) < 4 << 20
    # CRC of the 2 GiB is not computed here (too slow for a test); the refusal comes before any
    # byte is inflated, so it is never looked at
    bad = write_zip(tmp_path / "bomb.npz", replace(members_of(ok), name,
                                                   (name, raw, 8, 0, usize)))
    timed_refusal(bad, r"'model/src_embed.weight' declares 2\.0 GiB once inflated.*config "
                       r"\(d_model=8.*refused before reading")


def test_entry_count_and_stored_size_lies_are_refused(tmp_path):
    ok = tiny_checkpoint(tmp_path)
    m = members_of(ok)
    name, raw, method, crc, usize = m[-1]
    bad = write_zip(tmp_path / "lie.npz", m[:-1] + [(name, raw, 0, crc, usize + 10)])
    with pytest.raises(ck.CheckpointError, match="stored entry declares"):
        ck.load_checkpoint(bad)
    many = [(f"x{i}.npy", b"", 0, 0, 0) for i in range(ck.MAX_ENTRIES + 1)]
    with pytest.raises(ck.CheckpointError, match=r"holds 50001 zip entries"):
        ck.load_checkpoint(write_zip(tmp_path / "many.npz", many))


def test_honest_checkpoints_still_load(tmp_path):
    ok = tiny_checkpoint(tmp_path)
    # rewritten by hand as stored and as deflated: both load
    m = members_of(ok)
    assert ck.load_model(write_zip(tmp_path / "stored.npz", m)).config.d_model == 8
    defl = []
    for name, raw, _, crc, usize in m:
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        defl.append((name, c.compress(raw) + c.flush(), 8, crc, usize))
    assert ck.load_model(write_zip(tmp_path / "deflated.npz", defl)).config.d_model == 8


def test_deeply_nested_header_json_is_a_checkpoint_error(tmp_path):
    """A header of JSON nested 50,000 deep used to end in a raw RecursionError."""
    import io

    import numpy as np
    ok = tiny_checkpoint(tmp_path)
    buf = io.BytesIO()
    np.save(buf, np.array("[" * 50_000 + "]" * 50_000))
    raw = buf.getvalue()
    bad = write_zip(tmp_path / "deep.npz", replace(members_of(ok), "header.npy",
                                                   ("header.npy", raw, 0, zlib.crc32(raw), len(raw))))
    with pytest.raises(ck.CheckpointError, match="header: JSON nested too deeply"):
        ck.load_checkpoint(bad)
