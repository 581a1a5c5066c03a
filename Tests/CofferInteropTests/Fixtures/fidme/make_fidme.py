"""Writes a FidMe export as Catima's FidmeImporter reads it: loyalty_programs.csv (RFC 4180 with ';', header
Retailer;Program;Added At;Reference;Firstname;Lastname), the same CSV zipped as export.zip, and expected.json.
Run: python3 make_fidme.py"""

import csv
import io
import json
import os
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROWS = [
    ["Carrefour", "Carte Pass", "2024-03-01 10:00:00 UTC", "2912345678901", "Jeanne", "Martin"],
    ["Fnac", "Fnac+", "2024-04-02 11:30:00 UTC", "FN-0042;77", "", ""],
    ["Décathlon", "", "", "9900112233", "Luc", ""],
    ["Expired Shop", "Old card", "2020-01-01 00:00:00 UTC", "", "Jeanne", "Martin"],
]
text = io.StringIO()
writer = csv.writer(text, delimiter=";", lineterminator="\r\n")
writer.writerow(["Retailer", "Program", "Added At", "Reference", "Firstname", "Lastname"])
writer.writerows(ROWS)
data = text.getvalue().encode()
with open(os.path.join(HERE, "loyalty_programs.csv"), "wb") as handle:
    handle.write(data)
with zipfile.ZipFile(os.path.join(HERE, "export.zip"), "w", zipfile.ZIP_DEFLATED) as archive:
    archive.writestr(zipfile.ZipInfo("loyalty_programs.csv", (2024, 1, 1, 0, 0, 0)), data)
with open(os.path.join(HERE, "expected.json"), "w") as handle:
    json.dump({
        "cards": [
            {"name": "Carrefour", "number": "2912345678901", "notes": "Carte Pass\n2024-03-01 10:00:00 UTC\nJeanne Martin"},
            {"name": "Fnac", "number": "FN-0042;77", "notes": "Fnac+\n2024-04-02 11:30:00 UTC"},
            {"name": "Décathlon", "number": "9900112233", "notes": "Luc"},
        ],
        "problems": [{"entry": "Expired Shop", "reason": "expires"}],
    }, handle, indent=2, sort_keys=True, ensure_ascii=False)
    handle.write("\n")
