"""PNG encoding and scaling for screenshots, with the standard library (zlib) and GdkPixbuf."""
import struct
import zlib


def _chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def encode_rgb(width, height, rgb, level=3):
    """8-bit RGB PNG; filter 0 on every row keeps it fast (screens compress well anyway)."""
    stride = width * 3
    raw = b"".join(b"\x00" + rgb[y * stride:(y + 1) * stride] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, level)) + _chunk(b"IEND", b"")


def scale_rgb(width, height, rgb, new_width):
    """Bilinear downscale to `new_width` (aspect kept) through GdkPixbuf."""
    import gi

    gi.require_version("GdkPixbuf", "2.0")
    from gi.repository import GdkPixbuf, GLib

    new_height = max(1, round(height * new_width / width))
    pix = GdkPixbuf.Pixbuf.new_from_bytes(GLib.Bytes.new(rgb), GdkPixbuf.Colorspace.RGB, False, 8, width, height, width * 3)
    scaled = pix.scale_simple(new_width, new_height, GdkPixbuf.InterpType.BILINEAR)
    stride = scaled.get_rowstride()
    pixels = scaled.get_pixels()
    row = new_width * 3
    if stride != row:
        pixels = b"".join(pixels[y * stride:y * stride + row] for y in range(new_height))
    return new_width, new_height, bytes(pixels[: row * new_height])
