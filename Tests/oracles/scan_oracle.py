#!/usr/bin/env python3
"""Images for the barcode reader's tests, drawn by an independent encoder (zint), or given as raw grey pixels, then
turned as a hand would hold them; and what zxing-cpp (the anchor) reads from each, on the same pixels.

Input (JSON on stdin): a list of requests, each
  {"zint": {"type": "EANX", "data": "...", "scale": 2}}  or  {"gray": {"width": W, "height": H, "pixels": base64}}
  with optional "margin" (white pixels around, default 40), "angle" (degrees, counter-clockwise, white fill),
  "invert" (light on dark).
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
from PIL import Image, ImageOps


def render(request, directory):
    if "zint" in request:
        spec = request["zint"]
        path = os.path.join(directory, "zint.png")
        subprocess.run(["zint", "-b", spec["type"], "-d", spec["data"], "--scale", str(spec.get("scale", 2)), "-o", path],
                       check=True, capture_output=True)
        image = Image.open(path).convert("L")
    else:
        gray = request["gray"]
        image = Image.frombytes("L", (gray["width"], gray["height"]), base64.b64decode(gray["pixels"]))
    margin = request.get("margin", 40)
    image = ImageOps.expand(image, border=margin, fill=255)
    if request.get("angle"):
        image = image.rotate(request["angle"], resample=Image.BILINEAR, expand=True, fillcolor=255)
    if request.get("invert"):
        image = ImageOps.invert(image)
    return image


def main():
    answers = []
    with tempfile.TemporaryDirectory() as directory:
        for request in json.load(sys.stdin):
            image = render(request, directory)
            found = zxingcpp.read_barcodes(image, try_invert=True)
            answers.append({"width": image.width, "height": image.height,
                            "pixels": base64.b64encode(image.tobytes()).decode(),
                            "zxing": [{"format": str(result.format), "hex": result.bytes.hex()} for result in found]})
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
