#!/usr/bin/env python3
"""Big TORCH_TRACE logs: jointscope's one-pass index beside tlparse on the same file, in one run.

Generates the logs when missing (bench/gen_big_log.py: real torch 2.x logs repeated), installs tlparse into a
cached venv when missing, then measures each tool as a child process (wall clock, peak RSS from wait4):
  - jointscope: bench/log_open (GraphFile::open, the index the GUI and CLI use, then one graph loaded; best of
    three), and `jointscope-cli info --json LOG` end to end;
  - tlparse LOG -o DIR --overwrite --no-browser (its whole report: it has no index-only mode);
  - a 10 GB log (--big-bytes) indexed by jointscope only (tlparse would take a quarter of an hour).
Every file is read once before it is timed, so that both tools find it in the page cache alike.

  bench/log_index_vs_tlparse.py [--build build-f] [--dir /tmp/jointscope-logbench] [--big-bytes 10G|0]
Prints and writes (--out) JSON: jointscope_seconds, jointscope_rss_mb, tlparse_seconds, tlparse_rss_mb, ...
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TLPARSE_VERSION = "0.4.3"


def run_measured(argv, stdout=subprocess.DEVNULL):
    """Runs argv under /usr/bin/time (wall clock, peak RSS of that process alone: a child forked from this python
    would count python's own pages); returns (seconds, peak RSS MiB, stdout text or None)."""
    with tempfile.NamedTemporaryFile("r") as timing:
        proc = subprocess.run(["/usr/bin/time", "-o", timing.name, "-f", "%e %M"] + argv, stdout=stdout,
                              stderr=subprocess.PIPE)
        if proc.returncode != 0:
            sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}")
        seconds, kib = timing.read().split()[-2:]
    out = proc.stdout.decode() if stdout == subprocess.PIPE else None
    return float(seconds), int(kib) / 1024.0, out


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


def ensure_log(path, size):
    if not path.exists() or path.stat().st_size < int(size * 0.99):
        subprocess.run([sys.executable, str(ROOT / "bench/gen_big_log.py"), str(path), "--bytes", str(size)],
                       check=True)
    return path


def ensure_tlparse(venv):
    exe = venv / "bin/tlparse"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin/pip"), "install", "-q", f"tlparse=={TLPARSE_VERSION}"], check=True)
    return exe


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1:].upper() in units else int(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(ROOT / "build-f"), help="a Release build with bench/log_open")
    parser.add_argument("--dir", default="/tmp/jointscope-logbench", help="where the generated logs go")
    parser.add_argument("--bytes", default="1G", help="the log measured beside tlparse")
    parser.add_argument("--big-bytes", default="10G", help="the log indexed by jointscope alone (0: none)")
    parser.add_argument("--tlparse-venv", default=str(pathlib.Path.home() / ".cache/jointscope/bench-venv"))
    parser.add_argument("--out", help="JSON file (default BUILD/bench/log_index.json)")
    args = parser.parse_args()
    build = pathlib.Path(args.build)
    log_open = build / "bench/log_open"
    cli = build / "app/jointscope-cli"
    for exe in (log_open, cli):
        if not exe.exists():
            sys.exit(f"{exe} missing: scripts/bench builds it (or cmake --build {build} --target log_open jointscope-cli)")
    work = pathlib.Path(args.dir)
    work.mkdir(parents=True, exist_ok=True)
    size = parse_size(args.bytes)
    log = ensure_log(work / f"trace_{args.bytes}.log", size)
    tlparse = ensure_tlparse(pathlib.Path(args.tlparse_venv))

    result = {"machine": f"{os.cpu_count()} cores", "log": str(log), "log_bytes": log.stat().st_size}
    warm(log)
    # Best of three for jointscope (a second each); tlparse runs once (a minute).
    runs = [run_measured([str(log_open), str(log)], stdout=subprocess.PIPE) for _ in range(3)]
    wall, rss, out = min(runs, key=lambda run: run[0])
    opened = json.loads(out)
    result.update(jointscope_seconds=round(opened["index_seconds"], 3), jointscope_process_seconds=round(wall, 3),
                  jointscope_rss_mb=round(rss, 1), graphs=opened["graphs"], problems=opened["problems"],
                  open_graph=opened["loaded"], open_graph_nodes=opened["loaded_nodes"],
                  open_graph_seconds=opened["load_seconds"], config_graph=opened["config_graph"],
                  config_found=opened["config_found"], config_seconds=opened["config_seconds"])
    wall, rss, _ = run_measured([str(cli), "info", "--json", str(log)])
    result.update(cli_info_seconds=round(wall, 3), cli_info_rss_mb=round(rss, 1))
    with tempfile.TemporaryDirectory() as out_dir:
        wall, rss, _ = run_measured([str(tlparse), str(log), "-o", out_dir + "/tl_out", "--overwrite",
                                     "--no-browser"])
    result.update(tlparse_version=TLPARSE_VERSION, tlparse_seconds=round(wall, 3), tlparse_rss_mb=round(rss, 1))
    result["speedup_vs_tlparse"] = round(result["tlparse_seconds"] / result["jointscope_process_seconds"], 1)

    if args.big_bytes not in ("0", ""):
        big_size = parse_size(args.big_bytes)
        big = ensure_log(work / f"trace_{args.big_bytes}.log", big_size)
        warm(big)
        wall, rss, out = run_measured([str(log_open), str(big)], stdout=subprocess.PIPE)
        opened = json.loads(out)
        result.update(big_log_bytes=big.stat().st_size, big_seconds=round(opened["index_seconds"], 3),
                      big_rss_mb=round(rss, 1), big_graphs=opened["graphs"],
                      big_open_graph_seconds=opened["load_seconds"],
                      big_config_seconds=opened["config_seconds"], big_config_found=opened["config_found"])
    text = json.dumps(result, indent=2)
    print(text)
    out_path = pathlib.Path(args.out) if args.out else build / "bench/log_index.json"
    out_path.write_text(text + "\n")


if __name__ == "__main__":
    main()
