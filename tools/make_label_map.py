"""Build src/roofscope/data/ncu_labels.json from two exports of one report.

ncu's details page names section metrics by label ("Duration") unless --print-metric-name name
is given. Exporting the same report both ways and pairing rows gives NVIDIA's own label->metric
map; usage: python tools/make_label_map.py LABELS.csv NAMES.csv
"""

import csv
import json
import sys
from pathlib import Path


def main(labels_csv: str, names_csv: str) -> None:
    with open(labels_csv, encoding="utf-8") as fa, open(names_csv, encoding="utf-8") as fb:
        a, b = list(csv.reader(fa)), list(csv.reader(fb))
    ha, hb = a[0], b[0]
    ia = {c: i for i, c in enumerate(ha)}
    ib = {c: i for i, c in enumerate(hb)}
    mapping: dict[str, dict[str, str]] = {}
    for ra, rb in zip(a[1:], b[1:], strict=True):
        label = ra[ia["Metric Name"]]
        name = rb[ib["Metric Name"]]
        section = ra[ia["Section Name"]]
        if not label or label == name:
            continue
        mapping.setdefault(section, {})[label] = name
    out = Path(__file__).resolve().parents[1] / "src/roofscope/data/ncu_labels.json"
    out.write_text(json.dumps(mapping, indent=1, sort_keys=True) + "\n")
    print(f"{sum(len(v) for v in mapping.values())} labels in {len(mapping)} sections -> {out}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
