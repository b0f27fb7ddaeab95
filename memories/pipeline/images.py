"""Uploaded images: the cheap checks in the request, and the reading (decode, clean, OCR) in the
worker's child process.

`image_check` runs in the upload request. It reads the file's first bytes and its header (Pillow
opens lazily: the size is in the header, no pixel is decoded), so a wrong file, a file whose name or
type says another format than its bytes, or one with more pixels than allowed is refused at once.

`image_read` runs in `memories.pipeline.parse_child`, under the sandbox's limits: it decodes the
pixels (the part a crafted file can make expensive), turns the picture upright as its EXIF
orientation says, and encodes it again in its own format with no metadata at all, so what is stored
and served carries no EXIF (GPS position, camera serial, time), XMP or text chunks; only the colour
profile is kept. Then the text in it is read with RapidOCR, whose ONNX models ship inside its wheel
(nothing is downloaded). Every problem with the input is an `AppError` with a message safe to show.
"""

from __future__ import annotations

import io
import logging
import re
import warnings
from dataclasses import dataclass
from typing import Any

from memories.errors import AppError, Code

logger = logging.getLogger(__name__)

# Media type -> (Pillow's format name, the extensions that name it).
IMAGE_TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "image/png": ("PNG", (".png",)),
    "image/jpeg": ("JPEG", (".jpg", ".jpeg", ".jpe")),
    "image/webp": ("WEBP", (".webp",)),
}
EXTENSIONS = {extension: media_type for media_type, (_, names) in IMAGE_TYPES.items() for extension in names}
_NAMES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WebP"}
_SUPPORTED = "PNG, JPEG or WebP"

# What re-encoding keeps of the picture. JPEG and lossy WebP at 90 are visually the original; the
# pixels are decoded and encoded again anyway, since that is what removes everything else.
_QUALITY = 90
# OCR reads a copy no longer than this on its longest side: enough for text a person can read in
# the picture, and it bounds the model's memory whatever the upload's size.
OCR_MAX_SIDE = 2000
OCR_UPSCALE = 2.0
# Lines read with less confidence than this are more often noise (texture, a logo) than words.
OCR_MIN_SCORE = 0.6
_WORD = re.compile(r"\w")


@dataclass(frozen=True)
class ImageInfo:
    media_type: str
    width: int
    height: int


@dataclass(frozen=True)
class ReadImage:
    data: bytes  # the picture encoded again, upright, without metadata
    media_type: str
    width: int
    height: int
    text: str  # what OCR read, lines in reading order, paragraphs separated by a blank line


def _sniff(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _extension(filename: str) -> str:
    name = filename.replace("\\", "/").rsplit("/", 1)[-1].strip().lower()
    stem, dot, suffix = name.rpartition(".")
    return "." + suffix if dot and stem else ""


def _not_an_image() -> AppError:
    return AppError(
        Code.UNSUPPORTED_MEDIA_TYPE,
        f"This file is not a {_SUPPORTED} image.",
        agent_action=f"upload a {_SUPPORTED} image",
        details={"supported_media_types": sorted(IMAGE_TYPES)},
    )


def _mismatch(claimed: str, actual: str, by: str) -> AppError:
    return AppError(
        Code.UNSUPPORTED_MEDIA_TYPE,
        f"This file's {by} says {_NAMES[claimed]} but its content is {_NAMES[actual]}.",
        agent_action=f"upload it with the {by} that matches its content ({_NAMES[actual]})",
        details={"claimed": claimed, "actual": actual},
    )


def _too_large(message: str, **details: int) -> AppError:
    return AppError(
        Code.IMAGE_TOO_LARGE,
        message,
        agent_action="scale the image down (or crop it) and upload it again",
        details=details,
    )


def _unreadable() -> AppError:
    return AppError(
        Code.IMAGE_UNREADABLE,
        "This image could not be read; it may be damaged or incomplete.",
        agent_action="export the image again and upload the new file",
    )


def _pixels_over(width: int, height: int, max_pixels: int) -> AppError | None:
    if width * height <= max_pixels:
        return None
    return _too_large(
        f"This image has {width} x {height} pixels; the limit is {max_pixels:,} pixels.",
        max_pixels=max_pixels,
        width=width,
        height=height,
    )


def image_check(
    *, filename: str, data: bytes, declared_media_type: str = "", max_bytes: int, max_pixels: int
) -> ImageInfo:
    """The cheap checks of an image upload, in the request: size, format from the bytes (the name and
    the declared type must agree with it), and the pixel count from the header. Raises `AppError`."""
    from PIL import Image, UnidentifiedImageError

    if len(data) > max_bytes:
        raise _too_large(
            f"This image is larger than the {max_bytes // (1024 * 1024)} MB limit.", max_bytes=max_bytes
        )
    actual = _sniff(data)
    if actual is None:
        raise _not_an_image()
    named = EXTENSIONS.get(_extension(filename))
    if _extension(filename) and named is None:
        raise _not_an_image()
    if named is not None and named != actual:
        raise _mismatch(named, actual, "file name")
    declared = declared_media_type.split(";", 1)[0].strip().lower()
    declared = "image/jpeg" if declared in ("image/jpg", "image/pjpeg") else declared
    # Only an image type is a claim; clients send application/octet-stream for anything.
    if declared in IMAGE_TYPES and declared != actual:
        raise _mismatch(declared, actual, "content type")
    try:
        # Lazy: reads the header only; the pixel count below is what refuses a bomb here. Pillow's
        # own guard stays at its default in this process, which decodes nothing; the child that
        # decodes sets it to the limit (image_read).
        with Image.open(io.BytesIO(data), formats=[IMAGE_TYPES[actual][0]]) as image:
            width, height = image.size
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise _too_large(
            f"This image has more pixels than the {max_pixels:,} pixel limit.", max_pixels=max_pixels
        ) from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        logger.info("could not read the header of an image upload", exc_info=True)
        raise _unreadable() from None
    if over := _pixels_over(width, height, max_pixels):
        raise over
    return ImageInfo(media_type=actual, width=width, height=height)


def image_read(data: bytes, media_type: str, *, max_pixels: int, ocr: bool) -> ReadImage:
    """Decode the image, encode it again upright and without metadata, and read its text (when `ocr`).

    For the sandboxed child process: decoding is what a crafted file makes expensive. Raises
    `AppError` (image_unreadable, image_too_large) for a file that cannot be turned into a picture.
    """
    from PIL import Image, ImageOps

    pil_format = IMAGE_TYPES[media_type][0]
    # Pillow's own guard, at our limit: it refuses in open(), before allocating a bomb's pixels.
    # Pillow raises only past twice the limit and warns between; the warning is made an error, so
    # the guard is the limit itself. (catch_warnings is not thread-safe; the child has one thread.)
    Image.MAX_IMAGE_PIXELS = max_pixels
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            opened = Image.open(io.BytesIO(data), formats=[pil_format])
        with opened:
            if over := _pixels_over(*opened.size, max_pixels):
                raise over
            # An animation keeps its first frame: that is the picture a person sees first.
            opened.seek(0)
            opened.load()
            icc_profile = opened.info.get("icc_profile")
            transparency = opened.info.get("transparency")
            # A new image in every case (a copy when there is no orientation to apply).
            upright = ImageOps.exif_transpose(opened)
    except AppError:
        raise
    except MemoryError:
        raise  # a limit of the process (parse_child), not a damaged file
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise _too_large(
            f"This image has more pixels than the {max_pixels:,} pixel limit.", max_pixels=max_pixels
        ) from None
    except Exception:
        # Pillow raises many types on malformed input (OSError for truncation, ValueError, SyntaxError...).
        logger.info("could not decode an image upload", exc_info=True)
        raise _unreadable() from None
    # Nothing of the original's metadata goes further: what is written is what is passed below.
    upright.info = {}
    clean = _encode(upright, pil_format, icc_profile=icc_profile, transparency=transparency)
    width, height = upright.size
    text = ""
    if ocr:
        copy = _for_ocr(upright)
        del upright  # the full-size picture is not needed by the model; its memory is
        text = ocr_text(copy)
    return ReadImage(data=clean, media_type=media_type, width=width, height=height, text=text)


def _encode(image: Any, pil_format: str, *, icc_profile: Any, transparency: Any) -> bytes:
    options: dict[str, object] = {}
    if isinstance(icc_profile, bytes) and icc_profile:
        options["icc_profile"] = icc_profile
    if pil_format == "JPEG":
        if image.mode not in ("RGB", "L", "CMYK"):
            image = image.convert("RGB")
        options.update(quality=_QUALITY)
    elif pil_format == "WEBP":
        if image.mode not in ("RGB", "RGBA"):
            image = image.convert("RGBA" if "A" in image.mode or transparency is not None else "RGB")
        options.update(quality=_QUALITY)
    elif transparency is not None:
        options["transparency"] = transparency
    out = io.BytesIO()
    image.save(out, format=pil_format, **options)
    return out.getvalue()


def _for_ocr(image: Any) -> Any:
    from PIL import Image

    # On white, so transparent text areas read as the person sees them on a light page.
    if image.mode in ("RGBA", "LA", "P", "PA"):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, "white")
        image = Image.alpha_composite(background, rgba)
    rgb = image.convert("RGB")
    # Small pictures are read at up to twice their size: on a screenshot or a JPEG, the model reads
    # "Invoice4471isdue" at 1x where it reads "Invoice 4471 is due" at 1.5x or 2x (the gaps between
    # words are a few pixels, and compression blurs them). Large ones are read at OCR_MAX_SIDE.
    scale = min(OCR_UPSCALE, OCR_MAX_SIDE / max(rgb.size))
    if scale != 1:
        size = (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale)))
        rgb = rgb.resize(size, Image.Resampling.LANCZOS)
    return rgb


def ocr_text(image: object) -> str:
    """The text RapidOCR reads in an RGB image: lines in its reading order, a blank line where the
    gap to the next line is larger than a line's height (a new paragraph or block)."""
    import numpy

    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError:
        # OpenCV, which RapidOCR reads with, links libGL and glib; a server without them cannot
        # read text in pictures, but the picture and its caption are still kept and found.
        logging.getLogger(__name__).warning("OCR is unavailable here (RapidOCR cannot be imported)")
        return ""

    # One thread each: the worker's pool already runs one job per core, and the limits are per child.
    engine = RapidOCR(
        det_limit_side_len=960,
        det_limit_type="max",
        intra_op_num_threads=1,
        inter_op_num_threads=1,
    )
    # RapidOCR (OpenCV) expects BGR channel order.
    found, _ = engine(numpy.asarray(image)[:, :, ::-1])
    lines: list[tuple[float, float, str]] = []
    for box, text, score in found or []:
        if float(score) < OCR_MIN_SCORE or not _WORD.search(str(text)):
            continue
        ys = [float(point[1]) for point in box]
        lines.append((min(ys), max(ys), " ".join(str(text).split())))
    parts: list[str] = []
    previous: tuple[float, float, str] | None = None
    for line in lines:
        if previous is not None:
            gap = line[0] - previous[1]
            parts.append("\n\n" if gap > (previous[1] - previous[0]) else "\n")
        parts.append(line[2])
        previous = line
    return "".join(parts).strip()
