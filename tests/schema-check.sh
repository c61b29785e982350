#!/usr/bin/env bash
# The shipped JSON Schemas, checked with a client nobody here wrote: check-jsonschema
# (PyPI, `pip install check-jsonschema`).
#
#   tests/schema-check.sh            (from the repository root)
#
# 1. Every shipped scenario and model validates against schemas/*.schema.json.
# 2. Files that `irqsim run` refuses for a per-field limit are rejected by the schema
#    too (a few of the table in tests/it/schema.rs, written by python3 from the
#    reference scenario and model; Python's integers make 2^64 exact).
# Exit 0 when both hold, 1 otherwise, 2 when check-jsonschema or python3 is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in check-jsonschema python3; do
    if ! command -v "$tool" >/dev/null; then
        echo "schema-check: $tool not found (pip install check-jsonschema)" >&2
        exit 2
    fi
done

check-jsonschema --schemafile schemas/scenario.schema.json scenarios/*.json
check-jsonschema --schemafile schemas/model.schema.json models/*.json

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'EOF'
import copy, json, sys
out = sys.argv[1]
s = json.load(open("scenarios/dc21143-64b-1flow.json"))
m = json.load(open("models/p3-448-dc21143-freebsd4.json"))
def scen(name, edit):
    d = copy.deepcopy(s); edit(d)
    json.dump(d, open(f"{out}/scenario-{name}.json", "w"))
def model(name, edit):
    d = copy.deepcopy(m); edit(d)
    json.dump(d, open(f"{out}/model-{name}.json", "w"))
scen("duration-0", lambda d: d.update(duration_s=0))
scen("drain-negative", lambda d: d.update(drain_s=-1))
scen("replications-0", lambda d: d.update(replications=0))
scen("replications-2e32", lambda d: d.update(replications=2**32))
scen("seed-2e64", lambda d: d.update(seed=2**64))
scen("frame-58", lambda d: d["workload"]["flows"][0].update(frame_bytes=58))
scen("phase-1", lambda d: d["workload"]["flows"][0].update(start_phase=1.0))
scen("bucket-0", lambda d: d.update(timeline={"bucket_ms": 0}))
scen("variant-slash", lambda d: d.update(variants=[{"name": "a/b"}]))
model("ring-0", lambda d: d["nics"][0].update(rx_ring_slots=0))
model("line-rate-1", lambda d: d["nics"][0].update(line_rate_bps=1))
EOF

bad=0
for f in "$tmp"/*.json; do
    case "$(basename "$f")" in
        scenario-*) schema=schemas/scenario.schema.json ;;
        *) schema=schemas/model.schema.json ;;
    esac
    if check-jsonschema --schemafile "$schema" "$f" >/dev/null 2>&1; then
        echo "schema-check: $(basename "$f") passes $schema, but irqsim refuses it" >&2
        bad=1
    fi
done
if [ "$bad" = 0 ]; then
    echo "schema-check: shipped files valid; $(ls "$tmp" | wc -l) invalid files rejected"
fi
exit "$bad"
