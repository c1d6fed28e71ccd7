#!/usr/bin/env python3
"""Decodes a Perfetto protobuf trace with the Perfetto project's own generated protobuf modules
(PyPI `perfetto`, `perfetto/protos/perfetto/trace/perfetto_trace_pb2.py`, on the `protobuf`
runtime) and prints what it holds as JSON: tracks, slices (begin/end matched per track in
timestamp order, as a trace viewer does), instants, flows and counter values, every timestamp
resolved through the sequence's clock defaults and each event's track through its default track. The trace is read as any producer's would be:
nothing here knows how krphase wrote it.

Usage: decode.py TRACE         the trace's contents as JSON
       decode.py --text TRACE  every packet in protobuf text format (bundles opened), for a
                               golden file: a field the schema does not know shows as a number
       decode.py --digest TRACE  the packet count and a SHA-256 of every packet (bundles
                               opened) as the modules serialize it: equal for two traces that
                               decode to the same packets, however they were compressed
Exit 2 with one line when the modules are missing.
"""

import hashlib
import json
import sys
import zlib

try:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
except ImportError as e:  # one clear line, never a silent skip
    print(f"decode.py: the PyPI packages perfetto and protobuf are needed ({e})", file=sys.stderr)
    sys.exit(2)

BOOTTIME = 6


def packets(data):
    """Every packet of the trace, compressed bundles opened in place."""
    trace = pb.Trace()
    trace.ParseFromString(data)
    for p in trace.packet:
        if p.HasField("compressed_packets"):
            yield from packets(zlib.decompress(p.compressed_packets))
        else:
            yield p


class Sequence:
    """A packet sequence's incremental state: interned strings and packet defaults."""

    def __init__(self):
        self.names, self.cats, self.keys, self.values = {}, {}, {}, {}
        self.clock = None
        self.default_track = None
        self.cleared = False

    def intern(self, d):
        for e in d.event_names:
            self.names[e.iid] = e.name
        for e in d.event_categories:
            self.cats[e.iid] = e.name
        for e in d.debug_annotation_names:
            self.keys[e.iid] = e.name
        for e in d.debug_annotation_string_values:
            self.values[e.iid] = e.str.decode()


def annotation(seq, a):
    name = seq.keys[a.name_iid] if a.HasField("name_iid") else a.name
    for f in ("int_value", "uint_value", "double_value", "bool_value", "string_value"):
        if a.HasField(f):
            return name, getattr(a, f)
    if a.HasField("string_value_iid"):
        return name, seq.values[a.string_value_iid]
    raise ValueError(f"annotation {name} without a value")


def track_of(d):
    t = {"uuid": d.uuid, "parent": d.parent_uuid if d.HasField("parent_uuid") else None}
    if d.HasField("process"):
        t.update(kind="process", pid=d.process.pid, name=d.process.process_name)
    elif d.HasField("thread"):
        t.update(kind="thread", pid=d.thread.pid, tid=d.thread.tid, name=d.thread.thread_name)
    elif d.HasField("counter"):
        t.update(kind="counter", name=d.name, unit=d.counter.unit)
    else:
        t.update(kind="named", name=d.name)
    return t


def decode(data):
    seqs, tracks, events = {}, {}, []
    clocks = set()
    for order, p in enumerate(packets(data)):
        seq = seqs.setdefault(p.trusted_packet_sequence_id, Sequence())
        if p.sequence_flags & 1:
            seqs[p.trusted_packet_sequence_id] = seq = Sequence()
            seq.cleared = True
        if p.HasField("trace_packet_defaults"):
            d = p.trace_packet_defaults
            seq.clock = d.timestamp_clock_id
            if d.HasField("track_event_defaults") and d.track_event_defaults.HasField("track_uuid"):
                seq.default_track = d.track_event_defaults.track_uuid
        if p.HasField("interned_data"):
            seq.intern(p.interned_data)
        if p.HasField("track_descriptor"):
            tracks[p.track_descriptor.uuid] = track_of(p.track_descriptor)
        if not p.HasField("track_event"):
            continue
        if p.sequence_flags & 2 and not seq.cleared:
            raise ValueError("a packet needs incremental state its sequence never cleared")
        clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else seq.clock
        clocks.add(BOOTTIME if clock is None else clock)
        e = p.track_event
        ev = {
            "order": order,
            "ts": p.timestamp,
            "type": e.type,
            "track": e.track_uuid if e.HasField("track_uuid") else seq.default_track,
            "name": seq.names.get(e.name_iid) if e.HasField("name_iid") else e.name or None,
            "cats": [seq.cats[c] for c in e.category_iids] + list(e.categories),
            "args": dict(annotation(seq, a) for a in e.debug_annotations),
            "flow_out": list(e.flow_ids),
            "flow_in": list(e.terminating_flow_ids),
        }
        if e.HasField("counter_value"):
            ev["value"] = e.counter_value
        events.append(ev)
    return tracks, events, sorted(clocks)


def assemble(tracks, events):
    """Slices from begin/end pairs per track (timestamp order, file order within a timestamp)."""
    slices, instants, counters, flows = [], [], [], {}
    stacks = {}
    for ev in sorted(events, key=lambda e: (e["ts"], e["order"])):
        t = ev["type"]
        if t == 1:
            s = {k: ev[k] for k in ("track", "name", "cats", "args")}
            s.update(ts=ev["ts"], depth=len(stacks.get(ev["track"], [])))
            stacks.setdefault(ev["track"], []).append(s)
            slices.append(s)
            for f in ev["flow_out"]:
                flows.setdefault(f, {})["from"] = len(slices) - 1
            for f in ev["flow_in"]:
                flows.setdefault(f, {})["to"] = len(slices) - 1
        elif t == 2:
            stacks[ev["track"]].pop()["end"] = ev["ts"]
        elif t == 3:
            instants.append({k: ev[k] for k in ("track", "name", "cats", "args", "ts")})
        elif t == 4:
            counters.append({"track": ev["track"], "ts": ev["ts"], "value": ev["value"]})
    open_left = sum(len(s) for s in stacks.values())
    return {
        "tracks": list(tracks.values()),
        "slices": slices,
        "instants": instants,
        "counters": counters,
        "flows": list(flows.values()),
        "unclosed": open_left,
        "events_on_unknown_tracks": sum(1 for e in events if e["track"] not in tracks),
    }


def text(data):
    from google.protobuf import text_format

    for p in packets(data):
        print("packet {")
        print(text_format.MessageToString(p, indent=2, print_unknown_fields=True), end="")
        print("}")


def digest(data):
    h, n = hashlib.sha256(), 0
    for p in packets(data):
        b = p.SerializeToString(deterministic=True)
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
        n += 1
    print(f"packets {n} sha256 {h.hexdigest()}")


def main():
    if sys.argv[1] == "--digest":
        with open(sys.argv[2], "rb") as f:
            digest(f.read())
        return
    if sys.argv[1] == "--text":
        with open(sys.argv[2], "rb") as f:
            text(f.read())
        return
    with open(sys.argv[1], "rb") as f:
        tracks, events, clocks = decode(f.read())
    out = assemble(tracks, events)
    out["clocks"] = clocks
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
