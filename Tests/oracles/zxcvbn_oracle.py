#!/usr/bin/env python3
"""Dropbox's zxcvbn (the Python port) as an outside estimate of passphrase strength.

Reads a JSON array of passphrases on stdin; writes a JSON array of objects: the estimated guesses as a base-2
logarithm ("bits") and zxcvbn's 0-4 score, in the same order.
"""
import json
import math
import sys

from zxcvbn import zxcvbn

answers = []
for passphrase in json.load(sys.stdin):
    result = zxcvbn(passphrase)
    answers.append({"bits": result["guesses_log10"] * math.log2(10), "score": result["score"]})
json.dump(answers, sys.stdout)
