#!/usr/bin/env python3
"""Image files for the image decoders' tests, written by Pillow (and, for interlaced PNG, which Pillow does not
write, by the small writer below), with Pillow's own reading of each as luminance: the oracle.

Input (JSON on stdin): a list of requests, each {"format": "png"|"jpeg", "mode": Pillow mode ("1", "L", "LA", "P",
"PA", "RGB", "RGBA", "I;16"), "width", "height", "seed", optional "interlace" (PNG), "bits" (PNG palette bit depth),
"quality" (JPEG), "orientation" (JPEG EXIF tag), "transparency" (PNG tRNS for L/RGB/P: a pixel value)}.
Or {"raw_png": {"width", "height", "zeros": N}}: a grey 8-bit PNG header of that size over N deflated zero bytes
(hostile files: a header too large, data too short, a decompression bomb); or {"jpeg_of": {"width", "height",
"pixels": base64 grey}, "orientation", "quality"}: those pixels as a JPEG with that EXIF orientation tag.
Output (JSON on stdout): a list of {"file": base64 of the file, "width", "height", "luminance": base64 of Pillow's
reading (alpha composited over white, EXIF orientation applied, one byte a pixel)}.
"""
import base64
import io
import json
import struct
import sys
import zlib

import numpy
from PIL import Image, ImageOps


def picture(request):
    generator = numpy.random.Generator(numpy.random.PCG64(request["seed"]))
    width, height, mode = request["width"], request["height"], request["mode"]
    # Smooth gradients with blocks and noise: every filter type gets chosen, and palettes stay small.
    ys, xs = numpy.mgrid[0:height, 0:width]
    base = ((xs * 255 // max(1, width - 1)) ^ ((ys // 4) * 37)) & 0xFF
    noise = generator.integers(0, 256, size=(height, width))
    channel = numpy.where(noise % 5 == 0, noise, base).astype(numpy.uint8)
    if mode == "1":
        return Image.fromarray(channel > 127)
    if mode == "L":
        return Image.fromarray(channel, "L")
    if mode == "I;16":
        return Image.fromarray((channel.astype(numpy.uint16) * 257 + (noise % 255)).astype(numpy.uint16))
    rgb = numpy.stack([channel, numpy.roll(channel, 3, axis=1), 255 - channel], axis=2)
    if mode == "RGB":
        return Image.fromarray(rgb, "RGB")
    alpha = ((xs + ys) * 255 // max(1, width + height - 2)).astype(numpy.uint8)
    if mode == "RGBA":
        return Image.fromarray(numpy.dstack([rgb, alpha]), "RGBA")
    if mode == "LA":
        return Image.fromarray(numpy.dstack([channel, alpha]), "LA")
    colours = 2 ** request.get("bits", 8)
    paletted = Image.fromarray(rgb, "RGB").quantize(colors=colours)
    if mode == "PA":
        paletted.info["transparency"] = bytes([(index * 97) % 256 for index in range(colours)])
    return paletted


def interlaced_png(image):
    """An Adam7 PNG of an 8-bit L or RGB image, every row filter 0 (Pillow reads these but does not write them)."""
    array = numpy.asarray(image)
    colour = 0 if image.mode == "L" else 2
    raw = bytearray()
    for x0, y0, dx, dy in [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]:
        part = array[y0::dy, x0::dx]
        if part.size == 0:
            continue
        for row in part:
            raw += b"\x00" + row.tobytes()

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", image.width, image.height, 8, colour, 0, 0, 1)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b"")


def raw_png(width, height, zeros):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    compressor = zlib.compressobj(9)
    block = bytes(1 << 20)
    body = b""
    left = zeros
    while left > 0:
        body += compressor.compress(block[:min(left, len(block))])
        left -= min(left, len(block))
    body += compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body) + chunk(b"IEND", b"")


def luminance(data):
    image = Image.open(io.BytesIO(data))
    if image.format == "JPEG":
        # libjpeg's own luminance (its Y channel), not a conversion back from clamped RGB.
        image.draft("L", image.size)
    image = ImageOps.exif_transpose(image)
    if image.mode == "I;16":
        return (numpy.asarray(image).astype(numpy.uint32) * 255 // 65535).astype(numpy.uint8), image.size
    if image.mode == "P" or "transparency" in image.info or image.mode in ("LA", "RGBA", "PA"):
        image = image.convert("RGBA")
        white = Image.new("RGBA", image.size, "white")
        image = Image.alpha_composite(white, image)
    return numpy.asarray(image.convert("L")), image.size


def main():
    answers = []
    for request in json.load(sys.stdin):
        if "raw_png" in request:
            spec = request["raw_png"]
            answers.append({"file": base64.b64encode(raw_png(spec["width"], spec["height"], spec["zeros"])).decode()})
            continue
        if "jpeg_of" in request:
            spec = request["jpeg_of"]
            image = Image.frombytes("L", (spec["width"], spec["height"]), base64.b64decode(spec["pixels"]))
            exif = Image.Exif()
            exif[0x0112] = request["orientation"]
            # The pixels are stored turned so that the tag turns them back.
            stored = {1: image, 3: image.rotate(180, expand=True), 6: image.rotate(90, expand=True),
                      8: image.rotate(-90, expand=True)}[request["orientation"]]
            out = io.BytesIO()
            stored.save(out, "JPEG", quality=request["quality"], exif=exif.tobytes())
            answers.append({"file": base64.b64encode(out.getvalue()).decode()})
            continue
        image = picture(request)
        out = io.BytesIO()
        if request["format"] == "jpeg":
            exif = Image.Exif()
            if request.get("orientation"):
                exif[0x0112] = request["orientation"]
            image.convert("RGB" if image.mode not in ("L",) else "L").save(out, "JPEG", quality=request.get("quality", 90),
                                                                        exif=exif.tobytes())
            data = out.getvalue()
        elif request.get("interlace"):
            data = interlaced_png(image)
        else:
            options = {}
            if request.get("bits"):
                options["bits"] = request["bits"]
            if "transparency" in request:
                options["transparency"] = request["transparency"]
            image.save(out, "PNG", **options)
            data = out.getvalue()
        pixels, (width, height) = luminance(data)
        answers.append({"file": base64.b64encode(data).decode(), "width": width, "height": height,
                        "luminance": base64.b64encode(pixels.tobytes()).decode()})
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
