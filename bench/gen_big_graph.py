#!/usr/bin/env python3
"""Builds large, valid FX joint graphs by repeating the layers of real torch graphs.

Two templates, both real text written by torch:
  113: torch 1.13 print_readable() of two GPT blocks (torch-1.13/gpt_block2/joint.txt), no annotations.
  2x:  the torch 2.x aot_joint_graph of torch-trace/inductor_provenance_jit_debug_handle_log.txt, with quoted
       "f32[8, 16][16, 1]cuda:0" annotations, "# File:" stack traces and AOT descriptors.

Each repeat ("instance") gets its own node names (suffix _l<k>) and its own parameters. Instance k's input
placeholder is replaced by instance k-1's forward output; for the 1.13 template (whose gradient w.r.t. the input is
an output) instance k's tangent is replaced by instance k+1's input gradient, so the forward runs 1..N and the
backward N..1 as in a real deep model. The result is one connected graph with unique names; the node count
(len(graph.nodes)) is written to <out>.nodes by independent counting here, so benchmarks can check the reader.

Deterministic; uses only the standard library. Nothing here is executed from the input.
"""
import argparse
import json
import os
import re
import sys

IDENT = re.compile(r"[A-Za-z_]\w*")
STMT = re.compile(r'^(\s+)([A-Za-z_]\w*)(\s*:\s*"[^"]*")?\s*=\s*(.*)$')
PLACEHOLDER_DECL = re.compile(r'^(\s+)([A-Za-z_]\w*)(\s*:\s*"[^"]*")\s*(#.*)?$')


def rename(text, names, track=None):
    """Renames identifiers in `names` (dict) outside strings, attributes (x.name), kwargs and comments."""
    out = []
    i, n, depth = 0, len(text), 0
    while i < n:
        c = text[i]
        if c in "\"'":
            j = text.find(c, i + 1)
            j = n if j < 0 else j + 1
            out.append(text[i:j])
            i = j
        elif c == "#":
            out.append(text[i:])
            break
        elif c.isdigit():
            m = re.compile(r"\d[\w.]*").match(text, i)
            out.append(m.group(0))
            i = m.end()
        elif c.isalpha() or c == "_":
            m = IDENT.match(text, i)
            word = m.group(0)
            after = text[m.end():].lstrip(" ")
            is_attr = i > 0 and text[i - 1] == "."
            is_kwarg = depth > 0 and after.startswith("=") and not after.startswith("==")
            if not is_attr and not is_kwarg and word in names:
                if track is not None:
                    track.add(word)
                word = names[word]
            out.append(word)
            i = m.end()
        else:
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            out.append(c)
            i += 1
    return "".join(out)


class Template:
    def __init__(self, text):
        lines = text.split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        self.header = []         # class / def lines
        self.placeholders = []   # names, in order
        self.decls = {}          # placeholder -> (indent, annotation, comment) for 2.x declarations
        self.statements = []     # (leading lines, indent, name, annotation, rhs)
        self.outputs = []        # (name or "None", comment)
        self.indent = "        "
        pending = []
        i = 0
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            if "fx_pytree.tree_flatten_spec" in line:
                lhs = line.split("=")[0]
                self.placeholders = [p.strip() for p in lhs.split(",") if p.strip()]
                self.indent = line[: len(line) - len(line.lstrip())]
                pending = []
            elif stripped.startswith("return "):
                body = [line]
                while "self._out_spec)" not in body[-1]:
                    i += 1
                    body.append(lines[i])
                self.outputs = self._parse_return(body)
            elif not self.placeholders and (m := PLACEHOLDER_DECL.match(line)) and "=" not in line.split("#")[0]:
                self.decls[m.group(2)] = (m.group(1), m.group(3), m.group(4) or "")
            elif not self.placeholders and not self.decls:
                self.header.append(line)
            elif (m := STMT.match(line)) and self.placeholders:
                self.statements.append((pending, m.group(1), m.group(2), m.group(3) or "", m.group(4)))
                pending = []
            elif self.placeholders:
                pending.append(line)  # comments, blank lines
            i += 1
        self.defined = [s[2] for s in self.statements]

    @staticmethod
    def _parse_return(body):
        joined = "\n".join(body)
        inner = joined[joined.index("[") + 1: joined.rindex("]")]
        outs = []
        for part in inner.split("\n") if "\n" in inner else inner.split(","):
            code, _, comment = part.partition("#")
            for name in code.split(","):
                if name.strip():
                    outs.append((name.strip(), comment.strip()))
        return outs

    def backward_set(self, tangents):
        """Statements that transitively read a tangent (the expression part, not the `x = None` clause)."""
        bwd = set(tangents)
        for _, _, name, _, rhs in self.statements:
            used = set()
            rename(rhs.split(";")[0], {n: n for n in bwd}, used)
            if used:
                bwd.add(name)
        return bwd


def generate(template_text, layers, input_name, chain_output, num_fwd, chain_backward, template_meta=None):
    t = Template(template_text)
    primals = [p for p in t.placeholders if p.startswith("primals")]
    tangents = [p for p in t.placeholders if p.startswith("tangents")]
    fwd_outs = t.outputs[:num_fwd]
    grad_outs = t.outputs[num_fwd:]
    assert len(grad_outs) == len(primals), (len(grad_outs), len(primals))
    grad_of = {p: grad_outs[j][0] for j, p in enumerate(primals)}
    bwd = t.backward_set(tangents)
    fwd_stmts = [s for s in t.statements if s[2] not in bwd]
    bwd_stmts = [s for s in t.statements if s[2] in bwd]
    assert input_name in primals and chain_output in [o[0] for o in fwd_outs]
    if chain_backward:
        assert len(tangents) == 1 and grad_of[input_name] != "None"

    # Global placeholder order: each instance's parameters, then the first instance's input, then tangents.
    maps = []
    placeholder_list = []   # (global name, template name, instance)
    counter = 0
    for k in range(1, layers + 1):
        names = {n: f"{n}_l{k}" for n in t.defined}
        for p in primals:
            if p == input_name:
                continue
            counter += 1
            names[p] = f"primals_{counter}"
            placeholder_list.append((names[p], p, k))
        maps.append(names)
    counter += 1
    maps[0][input_name] = f"primals_{counter}"
    placeholder_list.append((maps[0][input_name], input_name, 1))
    for k in range(2, layers + 1):
        maps[k - 1][input_name] = maps[k - 2][chain_output]
    primal_index = {g: i for i, (g, _, _) in enumerate(placeholder_list)}

    # Outputs: forward outputs (intermediate chain outputs are not model outputs when the backward is chained),
    # then one gradient per global primal, in placeholder order.
    outputs = []  # (expr, descriptor)
    fwd_index = {}
    for k in range(1, layers + 1):
        for name, _ in fwd_outs:
            if chain_backward and name == chain_output and k != layers:
                continue
            fwd_index[(k, name)] = len(outputs)
            outputs.append((maps[k - 1][name], f"PlainAOTOutput(idx={len(outputs)})"))
    tangent_list = []
    tangent_counter = 0
    for k in range(1, layers + 1):
        for tg in tangents:
            if chain_backward and k != layers:
                maps[k - 1][tg] = maps[k][grad_of[input_name]]
                continue
            tangent_counter += 1
            maps[k - 1][tg] = f"tangents_{tangent_counter}"
            tangent_list.append((maps[k - 1][tg], tg, k, fwd_index.get((k, chain_output), 0)))
    for g, p, k in placeholder_list:
        src = grad_of[p]
        expr = "None" if src == "None" else maps[k - 1][src]
        desc = "None" if src == "None" else f"GradAOTOutput(grad_of=PlainAOTInput(idx={primal_index[g]}))"
        outputs.append((expr, desc))

    annotated = bool(t.decls)
    out = list(t.header)
    ind = t.indent
    if annotated:
        for g, p, _ in placeholder_list:
            _, ann, _ = t.decls[p]
            out.append(f"{ind}{g}{ann}  # PlainAOTInput(idx={primal_index[g]})")
        for g, p, _, out_idx in tangent_list:
            _, ann, _ = t.decls[p]
            out.append(f"{ind}{g}{ann}  # TangentAOTInput(output=PlainAOTOutput(idx={out_idx}))")
    all_placeholders = [g for g, _, _ in placeholder_list] + [g for g, _, _, _ in tangent_list]
    out.append(f"{ind}{', '.join(all_placeholders)}, = fx_pytree.tree_flatten_spec([primals, tangents], "
               "self._in_spec)")
    nodes = len(all_placeholders)
    # The torch 1.13 template's shapes live in its .meta.json sidecar: each generated node takes its template
    # node's entry under its new name.
    meta_by_name = {m["name"]: m for m in template_meta["nodes"]} if template_meta else {}
    meta_nodes = []

    def add_meta(new_name, template_name):
        if template_name in meta_by_name:
            entry = dict(meta_by_name[template_name])
            entry["name"] = new_name
            meta_nodes.append(entry)

    for g, p, _ in placeholder_list:
        add_meta(g, p)
    for g, p, _, _ in tangent_list:
        add_meta(g, p)

    def emit(stmts, k):
        nonlocal nodes
        names = maps[k - 1]
        for pending, sind, name, ann, rhs in stmts:
            out.extend(pending)
            out.append(f"{sind}{names[name]}{ann} = {rename(rhs, names)}")
            add_meta(names[name], name)
            nodes += 1

    for k in range(1, layers + 1):
        emit(fwd_stmts, k)
    for k in (range(layers, 0, -1) if chain_backward else range(1, layers + 1)):
        emit(bwd_stmts, k)
    if annotated:
        out.append(f"{ind}return pytree.tree_unflatten([")
        for expr, desc in outputs:
            out.append(f"{ind}    {expr},  # {desc}")
        out.append(f"{ind}], self._out_spec)")
    else:
        out.append(f"{ind}return pytree.tree_unflatten([{', '.join(e for e, _ in outputs)}], self._out_spec)")
    out.append(f"{ind}")
    nodes += 1  # output node
    sidecar = None
    if template_meta:
        sidecar = {"torch": template_meta.get("torch", ""), "num_fwd_outputs": sum(
            1 for k in range(1, layers + 1) for name, _ in fwd_outs
            if not (chain_backward and name == chain_output and k != layers)), "nodes": meta_nodes}
    return "\n".join(out) + "\n", nodes, len(t.statements), sidecar


def trace_log_payload(path, kind):
    """Un-indented payload of the first `kind` entry of a TORCH_TRACE log."""
    lines = open(path, encoding="utf-8").read().split("\n")
    for i, line in enumerate(lines):
        if f'{{"{kind}"' in line:
            payload = []
            for body in lines[i + 1:]:
                if not body.startswith("\t"):
                    break
                payload.append(body[1:])
            return "\n".join(payload) + "\n"
    sys.exit(f"gen_big_graph: no {kind} in {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", required=True, help="the shared/ folder (graphs/...)")
    ap.add_argument("--style", choices=["113", "2x"], required=True)
    ap.add_argument("--nodes", type=int, help="repeat until at least this many nodes")
    ap.add_argument("--layers", type=int, help="transformer layers (1.13 template: 2 per repeat)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--meta", action="store_true", help="1.13 style: also write OUT's .meta.json sidecar (shapes)")
    a = ap.parse_args()
    if a.style == "113":
        text = open(os.path.join(a.shared, "graphs/torch-1.13/gpt_block2/joint.txt"), encoding="utf-8").read()
        args = dict(input_name="primals_25", chain_output="add_3", num_fwd=1, chain_backward=True)
        if a.meta and a.style == "113":
            with open(os.path.join(a.shared, "graphs/torch-1.13/gpt_block2/joint.meta.json"), encoding="utf-8") as f:
                args["template_meta"] = json.load(f)
        per_repeat_layers = 2
    else:
        text = trace_log_payload(os.path.join(a.shared, "graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt"),
                                 "aot_joint_graph")
        args = dict(input_name="primals_3", chain_output="sigmoid", num_fwd=2, chain_backward=False)
        per_repeat_layers = 1
    if a.layers:
        repeats = max(1, a.layers // per_repeat_layers)
    else:
        _, one, _, _ = generate(text, 1, **args)
        _, two, _, _ = generate(text, 2, **args)
        repeats = 1 + max(0, -(-(a.nodes - one) // (two - one)))
    result, nodes, _, sidecar = generate(text, repeats, **args)
    if sidecar is not None:
        stem = a.out[:-4] if a.out.endswith(".txt") else a.out
        with open(stem + ".meta.json", "w", encoding="utf-8") as f:
            json.dump(sidecar, f)
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(result)
    with open(a.out + ".nodes", "w", encoding="utf-8") as f:
        f.write(f"{nodes}\n")
    print(f"gen_big_graph: {a.out}: {repeats} repeats, {nodes} nodes, {len(result)} bytes")


if __name__ == "__main__":
    main()
