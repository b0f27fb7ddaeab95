"""Images built in code for the image tests: rendered text, photos with GPS EXIF, bombs."""

from __future__ import annotations

import io
import struct
import zlib

from PIL import ExifTags, Image, ImageDraw, ImageFont

FORMATS = {"png": ("PNG", "image/png"), "jpg": ("JPEG", "image/jpeg"), "webp": ("WEBP", "image/webp")}


def render(
    text: str, extension: str = "png", *, size: tuple[int, int] = (760, 110), exif: bytes = b""
) -> bytes:
    """`text` drawn in black on white, encoded as the format of `extension` (png, jpg, webp)."""
    image = Image.new("RGB", size, "white")
    ImageDraw.Draw(image).text((16, 36), text, fill="black", font=ImageFont.load_default(size=30))
    return encode(image, extension, exif=exif)


def encode(image: Image.Image, extension: str, *, exif: bytes = b"") -> bytes:
    out = io.BytesIO()
    options: dict[str, object] = {"exif": exif} if exif else {}
    if extension != "png":
        options["quality"] = 92
    image.save(out, format=FORMATS[extension][0], **options)
    return out.getvalue()


def photo(size: tuple[int, int] = (320, 200)) -> Image.Image:
    """A picture with no text in it: a gradient with a disc, as a camera might see a sunset."""
    width, height = size
    image = Image.new("RGB", size)
    image.putdata([(x * 255 // width, y * 255 // height, 120) for y in range(height) for x in range(width)])
    ImageDraw.Draw(image).ellipse((width // 3, height // 4, width // 2, height // 2), fill=(250, 200, 40))
    return image


def gps_exif(*, orientation: int = 1) -> bytes:
    """EXIF as a phone writes it: camera, time, an orientation and a GPS position (Paris)."""
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "PhoneMaker"
    exif[ExifTags.Base.Model] = "Pocket 12"
    exif[ExifTags.Base.DateTime] = "2024:06:01 18:30:00"
    exif[ExifTags.Base.Orientation] = orientation
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "N"
    gps[ExifTags.GPS.GPSLatitude] = (48.0, 51.0, 29.6)
    gps[ExifTags.GPS.GPSLongitudeRef] = "E"
    gps[ExifTags.GPS.GPSLongitude] = (2.0, 17.0, 40.2)
    return exif.tobytes()


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims `width` x `height` pixels (a decompression bomb's header)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit greyscale
    # One row of zeros compresses to a few bytes; the rest of the claimed canvas is never sent.
    data = zlib.compress(b"\x00" * (width + 1))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", data) + chunk(b"IEND", b"")
