#!/usr/bin/env python3
"""Writes a TORCH_TRACE log of a given size for the log-index bench: real torch 2.x logs repeated, each copy's
frame ids (and the compile ids that name them) shifted in the record lines so that every compile id stays
distinct (payloads and their md5s are untouched).

  bench/gen_big_log.py OUT.log --bytes 1G [--source LOG ...]
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_SOURCES = [
    ROOT.parent / "shared/graphs/torch-trace/multi_rank_rank_1.log",
    ROOT.parent / "shared/graphs/torch-trace/cache_hit_miss.log",
    ROOT / "tests/data/torch2/gpt_stack_ac_trace.log",
    ROOT / "tests/data/torch2/dyn_gpt_inductor_budget05_trace.log",
]
FRAME_ID = re.compile(rb'"frame_id": (\d+)')
# compilation_metrics (and chromium events) name their compile as "[!A/]F/C[_N]": its frame id moves too.
COMPILE_ID = re.compile(rb'"compile_id": "(!\d+/)?(\d+)/')


def segments(blob):
    """The blob as (is_record_line, bytes) pieces: record lines one by one, payload lines (tab-indented) as runs."""
    pieces = []
    for line in blob.splitlines(keepends=True):
        record = not line.startswith(b"\t")
        if pieces and not record and not pieces[-1][0]:
            pieces[-1][1].append(line)
        else:
            pieces.append((record, [line]))
    return [(record, b"".join(lines)) for record, lines in pieces]


def shifted(pieces, shift):
    """The copy with its record lines' frame and compile ids moved by `shift`."""
    out = []
    for record, data in pieces:
        if record:
            data = FRAME_ID.sub(lambda m: b'"frame_id": %d' % (int(m.group(1)) + shift), data)
            data = COMPILE_ID.sub(
                lambda m: b'"compile_id": "%s%d/' % (m.group(1) or b"", int(m.group(2)) + shift), data)
        out.append(data)
    return b"".join(out)


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1:].upper() in units:
        return int(float(text[:-1]) * units[text[-1:].upper()])
    return int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--bytes", default="1G", help="size to reach (K/M/G suffixes)")
    parser.add_argument("--source", action="append", help="logs to repeat (default: shared real logs)")
    args = parser.parse_args()
    target = parse_size(args.bytes)
    sources = [pathlib.Path(p) for p in (args.source or DEFAULT_SOURCES)]
    blobs = [p.read_bytes() for p in sources if p.exists()]
    if not blobs:
        sys.exit("no source log found")
    # Each copy's frame ids move past every id of the copies before it.
    span = 1 + max(int(m.group(1)) for blob in blobs for m in FRAME_ID.finditer(blob))
    pieces = [segments(blob) for blob in blobs]
    written = copy = 0
    with open(args.out, "wb") as out:
        while written < target:
            for blob in pieces:
                data = shifted(blob, copy * span)
                if not data.endswith(b"\n"):
                    data += b"\n"
                out.write(data)
                written += len(data)
                copy += 1
                if written >= target:
                    break
    print(f"{args.out}: {written} bytes, {copy} copies of {len(blobs)} logs")


if __name__ == "__main__":
    main()
