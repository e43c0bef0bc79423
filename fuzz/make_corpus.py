#!/usr/bin/env python3
"""Seed corpora for the libFuzzer targets, cut from the real graphs in shared/graphs (never committed).

  fx/        FX texts: torch 1.13 joint/fw/bw, snippets, every graph payload of the TORCH_TRACE logs (un-indented)
  tracelog/  TORCH_TRACE logs cut at glog lines into pieces of at most --max-bytes (whole entries kept together)
  paste/     TORCH_LOGS terminal pastes built from the log payloads with torch's own line prefixes
             (TorchLogsFormatter, rank prefixes, the torch 2.0 logging style and ANSI colours), and the real
             pastes of tests/data/logs (compiled autograd, captured by capture_pastes.py) whole
  symexpr/   the symbolic size expressions of every FX text above (annotation sizes, Sym(...) values), plus the
             int64 corner cases the evaluator checks
  jsonline/  the JSON of every distinct record line of the TORCH_TRACE logs (fuzz_json_scan)
  json/      written later by fuzz_json_seeds from fx/
Usage: make_corpus.py SHARED_DIR OUT_DIR
"""
import argparse
import hashlib
import os
import re

GLOG = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]*\] ")


def write(folder, name, data):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def log_entries(text):
    """(header line, payload lines) per glog entry."""
    entries, current = [], None
    for line in text.split("\n"):
        if GLOG.match(line):
            current = (line, [])
            entries.append(current)
        elif current is not None:
            current[1].append(line)
    return entries


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shared")
    ap.add_argument("out")
    ap.add_argument("--max-bytes", type=int, default=24000)
    a = ap.parse_args()
    graphs = os.path.join(a.shared, "graphs")
    fx_dir, log_dir, paste_dir = (os.path.join(a.out, d) for d in ("fx", "tracelog", "paste"))
    seen = set()

    def add_fx(name, text):
        digest = hashlib.md5(text.encode()).hexdigest()
        if digest in seen or len(text) > a.max_bytes * 4:
            return
        seen.add(digest)
        write(fx_dir, name, text)

    for model in sorted(os.listdir(os.path.join(graphs, "torch-1.13"))):
        for f in ("joint.txt", "fw.txt", "bw.txt"):
            p = os.path.join(graphs, "torch-1.13", model, f)
            if os.path.exists(p):
                add_fx(f"{model}_{f}", open(p, encoding="utf-8").read())
    for f in sorted(os.listdir(os.path.join(graphs, "snippets"))):
        add_fx(f"snippet_{f}", open(os.path.join(graphs, "snippets", f), encoding="utf-8").read())

    payloads = []
    trace = os.path.join(graphs, "torch-trace")
    jsonline_dir = os.path.join(a.out, "jsonline")
    lines_seen = set()
    for f in sorted(os.listdir(trace)):
        text = open(os.path.join(trace, f), encoding="utf-8", errors="replace").read()
        stem = os.path.splitext(f)[0]
        # Log pieces: whole entries, at most max-bytes each.
        piece, count = [], 0
        size = 0
        for header, body in log_entries(text):
            record = GLOG.sub("", header, count=1)
            if record != header and record not in lines_seen:
                lines_seen.add(record)
                write(jsonline_dir, f"{stem}_{len(lines_seen):05d}.json", record)
            entry = "\n".join([header] + body) + "\n"
            if piece and size + len(entry) > a.max_bytes:
                write(log_dir, f"{stem}_{count:03d}.log", "".join(piece))
                count += 1
                piece, size = [], 0
            if len(entry) <= a.max_bytes:
                piece.append(entry)
                size += len(entry)
            payload = "\n".join(line[1:] for line in body if line.startswith("\t"))
            if "class " in payload and "def forward" in payload:
                kind = re.search(r'\{"(\w+)"', header)
                payloads.append((stem, kind.group(1) if kind else "graph", payload + "\n"))
        if piece:
            write(log_dir, f"{stem}_{count:03d}.log", "".join(piece))
    for i, (stem, kind, payload) in enumerate(payloads):
        add_fx(f"{stem}_{i:03d}_{kind}.txt", payload)

    # TORCH_LOGS pastes of a few payloads of each kind, in the prefix styles LogPaste.cpp documents.
    by_kind = {}
    for stem, kind, payload in payloads:
        by_kind.setdefault(kind, []).append(payload)
    n = 0
    for kind, texts in sorted(by_kind.items()):
        for payload in texts[:3]:
            if len(payload) > a.max_bytes:
                continue
            body = ["TRACED GRAPH", f" ===== {kind} =====", " /tmp/model.py " + payload.split("\n")[0]]
            body += [" " + line for line in payload.split("\n")[1:]]
            prefix = f"V1122 10:00:00.{n:06d} 1234 torch/_functorch/_aot_autograd/graph_compile.py:123] [0/{n % 3}] [__{kind}] "
            write(paste_dir, f"glog_{n:03d}.txt", "\n".join(prefix + line for line in body) + "\n")
            ranked = "\n".join(f"[rank{r}]:" + prefix + line for line in body for r in (0, 1)) + "\n"
            write(paste_dir, f"ranks_{n:03d}.txt", ranked)
            old = f"[2023-10-10 10:00:00,000] [0/0] torch._dynamo.output_graph.__graph_code: [DEBUG] "
            write(paste_dir, f"logging_{n:03d}.txt", old + "\n".join(body) + "\n")
            colored = re.sub(r"(torch\.ops\.\w+\.\w+\.\w+)", "\x1b[34m\\1\x1b[0m", "\n".join(body))
            write(paste_dir, f"ansi_{n:03d}.txt", "\n".join(prefix + line for line in colored.split("\n")) + "\n")
            n += 1
    # The pastes of tests/data/logs whole: the ones make_pastes.py built and the real compiled-autograd ones
    # capture_pastes.py captured from torch 2.15.
    logs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "logs")
    for f in sorted(os.listdir(logs)):
        if f.endswith((".log", ".txt")):
            write(paste_dir, f"testdata_{f}", open(os.path.join(logs, f), encoding="utf-8").read())
    # Size expressions: annotation entries with a symbol or an operator, and Sym(...) values.
    sym_dir = os.path.join(a.out, "symexpr")
    exprs = {"s0", "4*s0 + 1", "(s0//2)", "Max(1, s1)", "CeilDiv(s0, 8)", "Mod(s0, 3)", "-9223372036854775808 // -1",
             "9223372036854775807 + 1", "FloorDiv(s2, s3)", "-(-9223372036854775808)", "((((s0))))"}
    for name in os.listdir(fx_dir):
        text = open(os.path.join(fx_dir, name), encoding="utf-8").read()
        for m in re.finditer(r'"(?:[a-z]+\d*\[([^"]*)\])|Sym\(([^"]*)\)"', text):
            for part in (m.group(1) or m.group(2) or "").replace("][", ", ").split(", "):
                if re.search(r"[a-z]\d|[-+*/%(]", part):
                    exprs.add(part.strip())
    for i, e in enumerate(sorted(exprs)):
        write(sym_dir, f"expr_{i:04d}.txt", e)
    print(f"make_corpus: {len(os.listdir(fx_dir))} fx, {len(os.listdir(log_dir))} tracelog, "
          f"{len(lines_seen)} jsonline, "
          f"{len(os.listdir(paste_dir))} paste, {len(exprs)} symexpr seeds in {a.out}")


if __name__ == "__main__":
    main()
