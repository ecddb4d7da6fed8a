# Sourced by the device scripts: install the carried wheels (duckdb, platformdirs) and point
# Python at them and at this checkout. Run from the repository root.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src ROOFSCOPE_CACHE_DIR=/tmp/rs-cache
# the roofline sections of the committed samples
SECTIONS="--section SpeedOfLight --section SpeedOfLight_RooflineChart"
SECTIONS="$SECTIONS --section SpeedOfLight_HierarchicalDoubleRooflineChart --section SpeedOfLight_HierarchicalSingleRooflineChart"
SECTIONS="$SECTIONS --section SpeedOfLight_HierarchicalHalfRooflineChart --section SpeedOfLight_HierarchicalTensorRooflineChart"
