#!/usr/bin/python3
"""Independent XML events for XMLEventReaderTests: CPython's pyexpat (Expat), which shares no code with libxml2.

Reads a JSON array of documents (hex of their bytes) on stdin; prints a JSON array with, per document, its events
as [["start", name, {attributes}], ["text", text], ["end", name]] (adjacent text joined), or null when Expat finds
the document not well-formed."""

import json
import sys
import xml.parsers.expat


def events(document):
    found = []

    def text(data):
        if found and found[-1][0] == "text":
            found[-1][1] += data
        else:
            found.append(["text", data])

    def inside_root():
        depth = 0
        for event in found:
            depth += {"start": 1, "end": -1}.get(event[0], 0)
        return depth > 0

    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler = lambda name, attributes: found.append(["start", name, attributes])
    parser.EndElementHandler = lambda name: found.append(["end", name])
    # Text outside the root element is not character data (Expat passes it on only as "default" data).
    parser.CharacterDataHandler = lambda data: text(data) if inside_root() else None
    try:
        parser.Parse(document, True)
    except xml.parsers.expat.ExpatError:
        return None
    return found


print(json.dumps([events(bytes.fromhex(document)) for document in json.load(sys.stdin)]))
