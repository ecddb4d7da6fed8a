set -u
REAL=$OUT
export OUT=/tmp/o BUDGET=${BUDGET:-560}
bash tools/device/profile_applied.sh "$@" > /tmp/o.log 2>&1
cp /tmp/o.log $REAL/log.txt
tar czf $REAL/runs.tgz -C /tmp/o .
tail -60 /tmp/o.log
