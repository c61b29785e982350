"""Real-client check of `"arrivals": {"pcap": FILE}`: captures written by scapy (PyPI),
an implementation of pcap and pcapng independent of the pcap-file crate irqsim reads
them with, replay as the frames scapy wrote.

Three 5-tuples, 400 frames, one every 50 us (a span of 19.95 ms: the loop is
19.95 x 400 / 399 = 20 ms, the run's duration, so every frame is sent once): UDP
10.0.0.1:1000 (200 frames of 64 bytes with the FCS), TCP 10.0.0.2:2000 (100 of 128
bytes) and UDP 10.0.0.3:3000 behind an 802.1Q tag (100 of 68 bytes). Replayed
`as-captured` into the 21143 router at 100 Mbit/s (at most 24 % of line rate: nothing
is lost), from scapy's pcap (microsecond stamps) and its pcapng: each must give three
flows named for their 5-tuples that send exactly those frames and forward all of
them, and the two files the same results.

Usage: python capture-replay.py IRQSIM MODEL WORKDIR
"""

import json
import pathlib
import subprocess
import sys

from scapy.all import IP, TCP, UDP, Dot1Q, Ether, wrpcap
from scapy.utils import wrpcapng

irqsim, model, work = sys.argv[1], pathlib.Path(sys.argv[2]).resolve(), pathlib.Path(sys.argv[3])
work.mkdir(parents=True, exist_ok=True)

t0 = 1_700_000_000.0
frames = []
for k in range(400):
    if k % 2 == 0:
        p = Ether() / IP(src="10.0.0.1", dst="10.1.0.1") / UDP(sport=1000, dport=9) / (b"\0" * 18)
    elif k % 4 == 1:
        p = Ether() / IP(src="10.0.0.2", dst="10.1.0.1") / TCP(sport=2000, dport=80) / (b"\0" * 70)
    else:
        p = Ether() / Dot1Q(vlan=5) / IP(src="10.0.0.3", dst="10.1.0.1") / UDP(sport=3000, dport=9) / (b"\0" * 18)
    p.time = t0 + k * 50e-6
    frames.append(p)
sizes = {len(bytes(frames[i])) for i in (0, 1, 3)}
assert sizes == {60, 124, 64}, sizes

wrpcap(str(work / "three.pcap"), frames)
wrpcapng(str(work / "three.pcapng"), frames)

expected = {
    "cap/10.0.0.1:1000-10.1.0.1:9/udp": 200,
    "cap/10.0.0.2:2000-10.1.0.1:80/tcp": 100,
    "cap/10.0.0.3:3000-10.1.0.1:9/udp": 100,
}


def replay(name):
    scenario = {
        "model": str(model),
        "workload": {"flows": [{"name": "cap", "from": "dc0", "to": "dc1",
                                "arrivals": {"pcap": name, "timing": "as-captured"}}]},
        "load": {"unit": "pps", "points": [1]},
        "duration_s": 0.02,
        "drain_s": 0.01,
    }
    path = work / f"replay-{name.replace('.', '-')}.json"
    path.write_text(json.dumps(scenario))
    out = work / f"out-{name.replace('.', '-')}"
    subprocess.run([irqsim, "run", str(path), "--out", str(out), "--quiet", "--no-plots"], check=True)
    results = json.loads((out / "results.json").read_text())
    point = results["points"][0]
    got = {f["name"]: (f["sent"], f["received"]) for f in point["flows"]}
    assert set(got) == set(expected), got
    for flow, n in expected.items():
        assert got[flow] == (n, n), f"{name}: {flow}: sent, received {got[flow]}, expected {n}"
    return point


a, b = replay("three.pcap"), replay("three.pcapng")
for k in ("flows", "total"):
    assert a[k] == b[k], f"pcap and pcapng differ in {k}"
print("ok: scapy's pcap and pcapng replay as three flows of 200, 100 and 100 frames, all forwarded, the same run")
