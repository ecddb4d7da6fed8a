"""Convert shared/reference/gpu_specs.yaml into the package data file.

The YAML is the researched source (sources per entry); the package ships JSON so that a user
install needs no YAML parser. Usage: python tools/make_gpu_specs.py PATH/TO/gpu_specs.yaml
"""

import json
import sys
from pathlib import Path

import yaml


def main(src: str) -> None:
    data = yaml.safe_load(Path(src).read_text(encoding="utf-8"))
    out = Path(__file__).resolve().parents[1] / "src/roofscope/data/gpu_specs.json"
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{len(data['gpus'])} GPUs -> {out}")


if __name__ == "__main__":
    main(sys.argv[1])
