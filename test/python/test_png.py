"""The screenshot encoder writes PNGs any decoder reads: valid chunks and CRCs, the exact pixels."""
import struct
import zlib

from png import encode_rgb


def chunks(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, out = 8, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        out.append((kind, body))
        pos += 12 + length
    return out


def test_encodes_an_rgb_image_that_decodes_to_the_same_pixels():
    w, h = 3, 2
    rgb = bytes(range(w * h * 3))
    parts = chunks(encode_rgb(w, h, rgb))
    assert [k for k, _ in parts] == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBBBBB", parts[0][1]) == (w, h, 8, 2, 0, 0, 0)
    raw = zlib.decompress(parts[1][1])
    rows = [raw[y * (1 + w * 3):(y + 1) * (1 + w * 3)] for y in range(h)]
    assert all(r[0] == 0 for r in rows)  # filter type None on every row
    assert b"".join(r[1:] for r in rows) == rgb


def test_a_one_pixel_image_is_valid():
    parts = chunks(encode_rgb(1, 1, b"\xff\x00\x80"))
    assert zlib.decompress(parts[1][1]) == b"\x00\xff\x00\x80"
