#!/usr/bin/env python3
"""Images for the barcode reader's tests, drawn by an independent encoder (zint), or given as raw grey pixels, then
turned as a hand would hold them; and what zxing-cpp (the anchor) reads from each, on the same pixels.

Input (JSON on stdin): a list of requests, each one of
  {"zint": {"type": "EANX", "data": "...", "scale": 2, "options": ["--secure=4", ...]}},
  {"qrencode": {"data_hex": "...", "scale": 3, "options": ["-l", "H", ...]}} (the bytes given through a file),
  {"gray": {"width": W, "height": H, "pixels": base64}},
  {"beside": [request, ...]} (the images of several requests side by side),
  with optional "margin" (white pixels around, default 40), "blot" ([x, y, w, h] as fractions of the symbol: a black
  rectangle painted over it, before the margin), "tilt" (the top edge shortened by this fraction: a camera looking up
  at the symbol), "angle" (degrees, counter-clockwise, white fill), "blur" (Gaussian radius in pixels), "invert"
  (light on dark), "save" (also write the image to this path, as PNG).
Output (JSON on stdout): a list of {"width", "height", "pixels" (base64 of one byte a pixel), "zxing": [{"format",
"hex"}]}.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile

import zxingcpp
import numpy
from PIL import Image, ImageDraw, ImageFilter, ImageOps


def render(request, directory):
    if "beside" in request:
        parts = [render(part, directory) for part in request["beside"]]
        image = Image.new("L", (sum(part.width for part in parts), max(part.height for part in parts)), 255)
        x = 0
        for part in parts:
            image.paste(part, (x, 0))
            x += part.width
        return image
    if "zint" in request:
        spec = request["zint"]
        path = os.path.join(directory, "zint.png")
        subprocess.run(["zint", "-b", spec["type"], "-d", spec["data"], "--scale", str(spec.get("scale", 2)), "-o", path]
                       + spec.get("options", []), check=True, capture_output=True)
        image = Image.open(path).convert("L")
    elif "qrencode" in request:
        spec = request["qrencode"]
        source = os.path.join(directory, "data.bin")
        path = os.path.join(directory, "qrencode.png")
        with open(source, "wb") as handle:
            handle.write(bytes.fromhex(spec["data_hex"]))
        subprocess.run(["qrencode", "-r", source, "-s", str(spec.get("scale", 3)), "-m", "0", "-o", path]
                       + spec.get("options", []), check=True, capture_output=True)
        with Image.open(path) as drawn:
            image = Image.alpha_composite(Image.new("RGBA", drawn.size, "white"), drawn.convert("RGBA")).convert("L")
    else:
        gray = request["gray"]
        image = Image.frombytes("L", (gray["width"], gray["height"]), base64.b64decode(gray["pixels"]))
    if request.get("blot"):
        x, y, w, h = request["blot"]
        ImageDraw.Draw(image).rectangle([x * image.width, y * image.height, (x + w) * image.width, (y + h) * image.height],
                                        fill=0)
    margin = request.get("margin", 40)
    image = ImageOps.expand(image, border=margin, fill=255)
    if request.get("tilt"):
        # The top edge drawn shorter: map each output pixel back to the source (Pillow's PERSPECTIVE coefficients).
        width, height = image.size
        inset = request["tilt"] * width / 2
        corners = [(inset, 0), (width - inset, 0), (width, height), (0, height)]
        source = [(0, 0), (width, 0), (width, height), (0, height)]
        rows = []
        for (x, y), (u, v) in zip(corners, source):
            rows.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
            rows.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        targets = [value for point in source for value in point]
        coefficients = numpy.linalg.solve(numpy.array(rows, dtype=float), numpy.array(targets, dtype=float))
        image = image.transform((width, height), Image.PERSPECTIVE, tuple(coefficients), resample=Image.BILINEAR,
                                fillcolor=255)
    if request.get("angle"):
        image = image.rotate(request["angle"], resample=Image.BILINEAR, expand=True, fillcolor=255)
    if request.get("blur"):
        image = image.filter(ImageFilter.GaussianBlur(request["blur"]))
    if request.get("invert"):
        image = ImageOps.invert(image)
    return image


def main():
    answers = []
    with tempfile.TemporaryDirectory() as directory:
        for request in json.load(sys.stdin):
            image = render(request, directory)
            if request.get("save"):
                image.save(request["save"], "PNG")
            found = zxingcpp.read_barcodes(image, try_invert=True)
            answers.append({"width": image.width, "height": image.height,
                            "pixels": base64.b64encode(image.tobytes()).decode(),
                            "zxing": [{"format": str(result.format), "hex": result.bytes.hex()} for result in found]})
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
