#!/usr/bin/python3
"""`onnxport inspect --dot` and `--html`: the picture of an exported graph.

A model with nested submodules is exported (with and without --provenance); the DOT text must
lay out with Graphviz, hold one cluster per module path nested as the modules are, every ONNX
node exactly once and edges labelled with the types the ONNX file declares. The HTML page must be
self-contained, hold one SVG node group per ONNX node with tooltips carrying op and provenance,
and render in headless Chromium (a failure when Chromium is not installed). Errors: no dot on
PATH, an HTML path in a missing directory, --dot with --html, a file that is not ONNX.

Environment (set by ctest): ONNXPORT (the CLI), ONNXPORT_TEST_TMP (scratch directory).
Needs Graphviz's dot on PATH (tests/install-deps.sh installs graphviz and chromium).
"""
import html
import json
import os
import re
import shutil
import struct
import subprocess
import unittest
import zlib
from html.parser import HTMLParser
from typing import Dict, List, Optional, Set, Tuple

import numpy as np
import onnx
import torch
from onnx import mapping

CLI = os.environ["ONNXPORT"]
TMP = os.path.join(os.environ["ONNXPORT_TEST_TMP"], "picture")
DOT = shutil.which("dot")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Block(torch.nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = torch.nn.Conv2d(cin, cout, 3, padding=1)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.conv(x))


class Stage(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = Block(3, 8)
        self.second = Block(8, 8)
        self.act = torch.nn.ReLU()  # called twice: two clusters, one per call

    def forward(self, x):
        y = self.act(self.first(x))
        return self.act(self.second(y) + y)


class Nested(torch.nn.Module):
    """Module paths stage > stage.first > stage.first.conv, ..., stage.act (called twice), head."""

    def __init__(self):
        super().__init__()
        self.stage = Stage()
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(self.stage(x).mean((2, 3))) * 0.5


class Branchy(torch.nn.Module):
    """Scripted: a data-dependent branch becomes an ONNX If with two sub-graphs."""

    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(4, 4)

    def forward(self, x):
        if bool(x.sum() > 0):
            return self.inner(x) * 2
        return x - 1


def run(*args: str, env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300, env=env)


def type_text(t: onnx.TypeProto) -> str:
    """onnxport's spelling of a tensor type: float32[1,8,6,6]."""
    tt = t.tensor_type
    dtype = np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[tt.elem_type]).name
    dims = [str(d.dim_value) if d.HasField("dim_value") else (d.dim_param or "?") for d in tt.shape.dim]
    return f"{dtype}[{','.join(dims)}]"


def declared_types(graph: onnx.GraphProto) -> Dict[str, str]:
    types = {}
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type:
            types[vi.name] = type_text(vi.type)
    return types


def initializer_types(graph: onnx.GraphProto) -> Dict[str, str]:
    return {init.name: "{}[{}]".format(np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[init.data_type]).name,
                                       ",".join(str(d) for d in init.dims)) for init in graph.initializer}


def listed(node: onnx.NodeProto) -> bool:
    """Constant nodes are listed on their readers, as initializers are, not drawn."""
    return node.op_type == "Constant" and node.domain in ("", "ai.onnx")


def doc_module(node: onnx.NodeProto) -> str:
    match = re.match(r"pack=\S* op=\S* module=(\S*)", node.doc_string)
    assert match, f"no provenance on {node.name}: {node.doc_string!r}"
    return match.group(1)


def dotted_chain(path: str) -> List[str]:
    parts = path.split(".") if path else []
    return [".".join(parts[:k]) for k in range(1, len(parts) + 1)]


def name_chain(name: str) -> List[str]:
    scopes = name[name.find("/") + 1:name.rfind("/")] if name.count("/") >= 2 else ""
    return [s for s in scopes.split("/") if s]


def dot_unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text)


class Layout:
    """`dot -Tjson` of a DOT text: clusters with their parents, nodes by name, edges by names."""

    def __init__(self, dot_text: str):
        result = subprocess.run([DOT, "-Tjson"], input=dot_text, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[:2000]
        data = json.loads(result.stdout)
        objects = data.get("objects", [])
        self.clusters = [o for o in objects if o["name"].startswith("cluster")]
        self.nodes = [o for o in objects if not o["name"].startswith("cluster")]
        for o in objects:  # -Tjson gives attributes as written: DOT escapes still in
            for key in ("label", "tooltip"):
                if key in o:
                    o[key] = dot_unescape(o[key])
        by_gvid = {o["_gvid"]: o for o in objects}
        self.parent: Dict[int, Optional[int]] = {c["_gvid"]: None for c in self.clusters}
        for c in self.clusters:
            for child in c.get("subgraphs", []):
                self.parent[child] = c["_gvid"]
        self.cluster_by_gvid = {c["_gvid"]: c for c in self.clusters}
        # A cluster lists every node inside it, nested ones too: a node's home is its deepest holder.
        self.home: Dict[str, Optional[dict]] = {}
        for n in self.nodes:
            holders = [c for c in self.clusters if n["_gvid"] in c.get("nodes", [])]
            self.home[n["name"]] = max(holders, key=self.depth) if holders else None
        self.edges = [(by_gvid[e["tail"]]["name"], by_gvid[e["head"]]["name"], e) for e in data.get("edges", [])]

    def depth(self, cluster: dict) -> int:
        depth, p = 0, self.parent[cluster["_gvid"]]
        while p is not None:
            depth, p = depth + 1, self.parent[p]
        return depth

    def of_class(self, css_class: str) -> List[dict]:
        return [n for n in self.nodes if css_class in n.get("class", "").split()]

    def parent_cluster(self, cluster: dict) -> Optional[dict]:
        p = self.parent[cluster["_gvid"]]
        return self.cluster_by_gvid[p] if p is not None else None


class SvgNodes(HTMLParser):
    """The page's <g class="node ..."> groups: id, classes, the tooltip dot put on their <a>."""

    def __init__(self):
        super().__init__()
        self.groups: List[dict] = []
        self.depth = 0
        self.open: List[Tuple[int, dict]] = []
        self.svg_count = 0
        self.title_text: Optional[str] = None
        self.in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svg_count += 1
        if tag == "g":
            self.depth += 1
            classes = (a.get("class") or "").split()
            if "node" in classes:
                group = {"id": a.get("id"), "classes": classes, "tooltip": None, "title": ""}
                self.groups.append(group)
                self.open.append((self.depth, group))
        if tag == "a" and self.open and self.open[-1][1]["tooltip"] is None:
            self.open[-1][1]["tooltip"] = a.get("xlink:title")
        if tag == "title" and self.open:
            self.in_title = True

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if tag == "g":
            if self.open and self.open[-1][0] == self.depth:
                self.open.pop()
            self.depth -= 1

    def handle_data(self, data):
        if self.in_title and self.open:
            self.open[-1][1]["title"] += data


def png_pixels(path: str) -> Tuple[int, int, np.ndarray]:
    """Decodes an 8-bit RGB/RGBA PNG (what Chromium writes) with zlib: width, height, pixels."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, f"unexpected PNG format {header}"
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows = np.zeros((height, stride), dtype=np.uint8)
    previous = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int32)
        if kind == 0:
            out = line
        elif kind == 2:
            out = (line + previous) & 0xFF
        else:  # Sub, Average, Paeth depend on the pixel to the left: one pixel at a time
            out = np.zeros(stride, dtype=np.int32)
            for x in range(stride):
                left = out[x - channels] if x >= channels else 0
                up = previous[x]
                if kind == 1:
                    predictor = left
                elif kind == 3:
                    predictor = (left + up) // 2
                else:
                    up_left = previous[x - channels] if x >= channels else 0
                    p = left + up - up_left
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                    predictor = left if pa <= pb and pa <= pc else up if pb <= pc else up_left
                out[x] = (line[x] + predictor) & 0xFF
        rows[y] = out
        previous = out
    return width, height, rows.reshape(height, width, channels)[:, :, :3]


class PictureTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if DOT is None:
            raise unittest.SkipTest("Graphviz's dot is not on PATH (apt-get install graphviz)")
        shutil.rmtree(TMP, ignore_errors=True)
        os.makedirs(TMP)
        torch.manual_seed(0)
        pt = os.path.join(TMP, "nested.pt")
        torch.jit.trace(Nested().eval(), torch.randn(1, 3, 6, 6)).save(pt)
        cls.model_path = os.path.join(TMP, "nested.onnx")
        cls.plain_path = os.path.join(TMP, "plain.onnx")
        for path, extra in ((cls.model_path, ["--provenance"]), (cls.plain_path, [])):
            result = run("export", pt, "-o", path, "--input", "x:1x3x6x6", *extra)
            assert result.returncode == 0, result.stderr
        cls.model = onnx.load(cls.model_path)
        cls.plain = onnx.load(cls.plain_path)
        result = run("inspect", cls.model_path, "--dot")
        assert result.returncode == 0, result.stderr
        cls.dot_text = result.stdout
        cls.layout = Layout(cls.dot_text)

    def expected_edges(self, graph: onnx.GraphProto) -> Set[Tuple[str, str, str]]:
        types = declared_types(graph)
        initializers = {init.name for init in graph.initializer}
        producer = {}
        inputs = [vi.name for vi in graph.input if vi.name not in initializers]
        for k, name in enumerate(inputs):
            producer[name] = f"graph-input-{k}"
        for i, node in enumerate(graph.node):
            for out in node.output:
                if not listed(node):
                    producer[out] = f"onnx-node-{i}"
        edges = set()
        for i, node in enumerate(graph.node):
            for value in node.input:
                if value in producer:
                    edges.add((producer[value], f"onnx-node-{i}", types[value]))
        for k, vi in enumerate(graph.output):
            edges.add((producer[vi.name], f"graph-output-{k}", types[vi.name]))
        return edges

    # --- --dot

    def test_dot_lays_out_as_svg(self):
        result = subprocess.run([DOT, "-Tsvg"], input=self.dot_text, capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr[:2000])
        self.assertIn("<svg", result.stdout)

    def test_every_onnx_node_once(self):
        graph = self.model.graph
        drawn = [n["id"] for n in self.layout.of_class("onnx-node")]
        self.assertEqual(len(drawn), len(set(drawn)), "a node drawn twice")
        self.assertEqual(set(drawn), {f"onnx-node-{i}" for i, node in enumerate(graph.node) if not listed(node)})
        by_id = {n["id"]: n for n in self.layout.of_class("onnx-node")}
        for i, node in enumerate(graph.node):
            if listed(node):
                continue
            tooltip = by_id[f"onnx-node-{i}"]["tooltip"]
            self.assertIn(f"op: {node.op_type}\n", tooltip)
            self.assertIn(f"name: {node.name}\n", tooltip)
        # Inputs and outputs are nodes of their own; initializers and Constants are not.
        self.assertEqual(len(self.layout.of_class("graph-input")), 1)
        self.assertEqual(len(self.layout.of_class("graph-output")), len(graph.output))
        self.assertEqual(len(self.layout.nodes), len(drawn) + 1 + len(graph.output))
        for n in self.layout.nodes:
            for init in graph.initializer:
                self.assertNotEqual(n["name"], init.name)

    def test_constants_listed_on_their_readers(self):
        graph = self.model.graph
        constants = {node.output[0]: node for node in graph.node if listed(node)}
        self.assertTrue(constants, "the test model should export a Constant node (the * 0.5)")
        by_id = {n["id"]: n for n in self.layout.of_class("onnx-node")}
        readers = 0
        for i, node in enumerate(graph.node):
            for value in node.input:
                if value in constants:
                    readers += 1
                    drawn = by_id[f"onnx-node-{i}"]
                    self.assertIn(f"{value}  {declared_types(graph)[value]}  (Constant {constants[value].name}: value=",
                                  drawn["tooltip"])
                    self.assertIn(f"{declared_types(graph)[value]} const", drawn["label"])
        self.assertGreater(readers, 0)

    def test_clusters_nest_by_module_path(self):
        graph = self.model.graph
        expected = set()
        for node in graph.node:
            expected.update(dotted_chain(doc_module(node)))
        self.assertTrue({"stage", "stage.first", "stage.first.conv", "stage.second.act", "head"} <= expected, expected)
        modules = [c for c in self.layout.clusters if c.get("class") == "module"]
        labels = [c["label"] for c in modules]
        self.assertEqual(set(labels), expected)
        # One cluster per call: stage.act runs twice, every other module once.
        for path in expected:
            self.assertEqual(labels.count(path), 2 if path == "stage.act" else 1, path)
        for c in modules:
            parent = self.layout.parent_cluster(c)
            if "." in c["label"]:
                self.assertIsNotNone(parent, c["label"])
                self.assertEqual(parent["label"], c["label"].rsplit(".", 1)[0])
            else:
                self.assertIsNone(parent, c["label"])
        for n in self.layout.of_class("onnx-node"):
            node = graph.node[int(n["id"].rsplit("-", 1)[1])]
            home = self.layout.home[n["name"]]
            module = doc_module(node)
            self.assertEqual(home["label"] if home else "", module, node.name)

    def test_edges_point_down(self):
        """Clusters never force dot to turn the data flow upward (rankdir=TB: y grows upward)."""
        position = {n["name"]: tuple(map(float, n["pos"].split(","))) for n in self.layout.nodes}
        for tail, head, edge in self.layout.edges:
            self.assertGreater(position[tail][1], position[head][1], f"{tail} -> {head} points up")

    def test_clusters_from_node_names_without_provenance(self):
        result = run("inspect", self.plain_path, "--dot")
        self.assertEqual(result.returncode, 0, result.stderr)
        layout = Layout(result.stdout)
        for n in layout.of_class("onnx-node"):
            node = self.plain.graph.node[int(n["id"].rsplit("-", 1)[1])]
            self.assertEqual(node.doc_string, "")
            chain, home = name_chain(node.name), layout.home[n["name"]]
            self.assertEqual(home["label"] if home else None, chain[-1] if chain else None, node.name)
            labels = []
            while home is not None:
                labels.insert(0, home["label"])
                home = layout.parent_cluster(home)
            self.assertEqual(labels, chain, node.name)
        self.assertEqual({c["label"] for c in layout.clusters}, {c["label"] for c in self.layout.clusters})

    def test_edges_carry_types(self):
        actual = set()
        for tail, head, edge in self.layout.edges:
            if edge.get("class") == "value":
                actual.add((tail, head, edge.get("label")))
        self.assertEqual(actual, self.expected_edges(self.model.graph))
        self.assertTrue(any(label == "float32[1,8,6,6]" for _, _, label in actual))

    def test_weights_listed_on_their_node(self):
        weights = initializer_types(self.model.graph)
        convs = [(i, n) for i, n in enumerate(self.model.graph.node) if n.op_type == "Conv"]
        self.assertEqual(len(convs), 2)
        labels = {n["id"]: n["label"] for n in self.layout.of_class("onnx-node")}
        for i, conv in convs:
            self.assertIn(f"W: {weights[conv.input[1]]}", labels[f"onnx-node-{i}"])
            self.assertIn(f"B: {weights[conv.input[2]]}", labels[f"onnx-node-{i}"])

    def test_sub_graphs_drawn_as_clusters(self):
        pt, path = os.path.join(TMP, "branchy.pt"), os.path.join(TMP, "branchy.onnx")
        torch.jit.script(Branchy()).save(pt)
        result = run("export", pt, "-o", path, "--input", "x:2x4", "--mode", "script", "--provenance")
        self.assertEqual(result.returncode, 0, result.stderr)
        model = onnx.load(path)
        ifs = [i for i, n in enumerate(model.graph.node) if n.op_type == "If"]
        self.assertEqual(len(ifs), 1, "the branch should export as one If")
        owner = model.graph.node[ifs[0]]
        result = run("inspect", path, "--dot")
        self.assertEqual(result.returncode, 0, result.stderr)
        layout = Layout(result.stdout)
        expected = {f"onnx-node-{i}" for i, node in enumerate(model.graph.node) if not listed(node)}
        for attribute in owner.attribute:
            for j, node in enumerate(attribute.g.node):
                if not listed(node):
                    expected.add(f"onnx-node-{ifs[0]}/{attribute.name}/{j}")
        drawn = [n["id"] for n in layout.of_class("onnx-node")]
        self.assertEqual(sorted(drawn), sorted(expected))
        bodies = {c["label"].split(" ")[0]: c for c in layout.clusters if c.get("class") == "subgraph"}
        self.assertEqual(set(bodies), {"then_branch", "else_branch"})
        for name, cluster in bodies.items():
            self.assertTrue(cluster["label"].startswith(f"{name} of If"), cluster["label"])
            for n in layout.of_class("onnx-node"):
                if f"/{name}/" in n["id"]:
                    self.assertIn(n["_gvid"], cluster["nodes"], n["id"])
        owner_node = next(n for n in layout.of_class("onnx-node") if n["id"] == f"onnx-node-{ifs[0]}")
        self.assertIn("sub-graphs: then_branch, else_branch", owner_node["label"])
        svg = subprocess.run([DOT, "-Tsvg"], input=result.stdout, capture_output=True, text=True, timeout=300)
        self.assertEqual(svg.returncode, 0, svg.stderr[:2000])

    def test_file_from_another_tool(self):
        """No provenance, no value_info: clusters come from the node names, types from ONNX shape
        inference; past 200 nodes the types are xlabels and dot's positioning is bounded."""
        from onnx import TensorProto, helper
        nodes, previous = [], "x"
        for k in range(240):
            block = f"blocks.{k // 10}"
            nodes.append(helper.make_node("Relu", [previous], [f"v{k}"], name=f"/blocks/{block}/Relu_{k}"))
            previous = f"v{k}"
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                                  [helper.make_tensor_value_info(previous, TensorProto.FLOAT, [2, 3])])
        path = os.path.join(TMP, "other_tool.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        result = run("inspect", path, "--dot")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"graph \[[^\]]*nslimit=1")
        layout = Layout(result.stdout)
        values = [edge for _, _, edge in layout.edges if edge.get("class") == "value"]
        self.assertEqual(len(values), 241)
        for edge in values:
            self.assertEqual(edge.get("xlabel"), "float32[2,3]")
            self.assertFalse(edge.get("label"))
        labels = sorted(c["label"] for c in layout.clusters)
        self.assertEqual(labels, sorted(["blocks"] + [f"blocks.{b}" for b in range(24)]))
        for c in layout.clusters:
            parent = layout.parent_cluster(c)
            self.assertEqual(parent["label"] if parent else None, None if c["label"] == "blocks" else "blocks")

    def test_inference_that_would_crash_is_skipped(self):
        """libonnx's Conv inference divides by the strides: a zero stride must not kill inspect."""
        from onnx import TensorProto, helper
        graph = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["c"], name="/conv/Conv", strides=[0, 0]),
             helper.make_node("Relu", ["c"], ["y"], name="/Relu")], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [helper.make_tensor("w", TensorProto.FLOAT, [1, 1, 1, 1], [1.0])])
        path = os.path.join(TMP, "zero_stride.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        result = run("inspect", path, "--dot")
        self.assertEqual(result.returncode, 0, result.stderr)
        conv_to_relu = [e for t, h, e in Layout(result.stdout).edges if (t, h) == ("onnx-node-0", "onnx-node-1")]
        self.assertEqual(len(conv_to_relu), 1)
        self.assertFalse(conv_to_relu[0].get("label"), "no type known for c")

    def test_plain_inspect_still_prints_text(self):
        result = run("inspect", self.model_path)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith("graph main_graph"), result.stdout[:200])
        self.assertIn("kernel_shape=[3, 3]", result.stdout)

    # --- --html

    def write_html(self, name: str) -> Tuple[str, str]:
        out = os.path.join(TMP, name)
        result = run("inspect", self.model_path, "--html", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout.strip(), f"wrote {out}")
        with open(out, encoding="utf-8") as f:
            return out, f.read()

    def test_html_is_self_contained(self):
        out, page = self.write_html("self_contained.html")
        self.assertNotRegex(page, r"(?i)https?:")
        self.assertNotRegex(page, r"(?i)\bsrc\s*=")
        self.assertNotRegex(page, r"(?i)<link\b|@import|url\((?!#)")
        for href in re.findall(r"(?i)href\s*=\s*[\"']([^\"']*)", page):
            self.assertTrue(href.startswith("#"), href)
        leftovers = [f for f in os.listdir(TMP) if "onnxport-tmp" in f]
        self.assertEqual(leftovers, [])

    def test_html_nodes_and_tooltips(self):
        _, page = self.write_html("nodes.html")
        graph = self.model.graph
        parser = SvgNodes()
        parser.feed(page)
        self.assertEqual(parser.svg_count, 1)
        nodes = [g for g in parser.groups if "onnx-node" in g["classes"]]
        self.assertEqual(sorted(html.unescape(g["id"]) for g in nodes),
                         sorted(f"onnx-node-{i}" for i, node in enumerate(graph.node) if not listed(node)))
        for g in nodes:
            node = graph.node[int(html.unescape(g["id"]).rsplit("-", 1)[1])]
            tip = g["tooltip"]
            self.assertIsNotNone(tip, g["id"])
            pack, torch_op = re.match(r"pack=(\S*) op=(\S*)", node.doc_string).groups()
            for line in (f"op: {node.op_type}", f"name: {node.name}", f"pack: {pack}", f"torch op: {torch_op}",
                         "module: " + (doc_module(node) or "(top level)")):
                self.assertIn(line + "\n", tip + "\n", node.name)
            if " at " in node.doc_string:
                self.assertIn("source: " + node.doc_string.split(" at ", 1)[1], tip)
        conv = next(g for g in nodes if "op: Conv" in g["tooltip"])
        self.assertIn("kernel_shape=[3, 3]", conv["tooltip"])
        self.assertIn("(initializer)", conv["tooltip"])
        # The header: file name, opset, node count, inputs and outputs.
        header = page[page.index("<header>"):page.index("</header>")]
        self.assertIn("nested.onnx", header)
        self.assertIn("opset 17", header)
        self.assertIn(f"{len(graph.node)} nodes", header)
        self.assertIn("x: float32[1,3,6,6]", header)
        self.assertIn(f"{graph.output[0].name}: float32[1,4]", header)

    def test_html_renders_in_chromium(self):
        if CHROMIUM is None:
            self.fail("chromium is not installed: run tests/install-deps.sh (or apt-get install chromium)")
        out, _ = self.write_html("rendered.html")
        profile = os.path.join(TMP, "chromium-profile")
        base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile]
        dom = subprocess.run(base + ["--dump-dom", "file://" + out], capture_output=True, text=True, timeout=120)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        parser = SvgNodes()
        parser.feed(dom.stdout)
        nodes = [g for g in parser.groups if "onnx-node" in g["classes"]]
        self.assertEqual(len(nodes), len([node for node in self.model.graph.node if not listed(node)]))
        # The page's script moved each tooltip into the node's <title>, which browsers show on hover.
        for g in nodes:
            self.assertTrue(g["title"].startswith("op: "), g["title"][:100])
        png = os.path.join(TMP, "rendered.png")
        shot = subprocess.run(base + ["--screenshot=" + png, "--window-size=1200,900", "file://" + out],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(shot.returncode, 0, shot.stderr[-2000:])
        width, height, pixels = png_pixels(png)
        self.assertEqual((width, height), (1200, 900))
        not_white = np.any(pixels < 240, axis=2).mean()
        colours = len(np.unique(pixels.reshape(-1, 3) // 16, axis=0))
        self.assertGreater(not_white, 0.01, "the screenshot is blank")
        self.assertGreater(colours, 8, "the screenshot has almost no colours")

    # --- errors

    def assert_one_line_error(self, result: subprocess.CompletedProcess, *words: str):
        self.assertNotEqual(result.returncode, 0)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        for word in words:
            self.assertIn(word.lower(), lines[0].lower())

    def test_missing_dot(self):
        empty = os.path.join(TMP, "empty_bin")
        os.makedirs(empty, exist_ok=True)
        out = os.path.join(TMP, "no_dot.html")
        result = run("inspect", self.model_path, "--html", out, env={**os.environ, "PATH": empty})
        self.assert_one_line_error(result, "dot", "apt-get install graphviz", self.model_path)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([f for f in os.listdir(TMP) if "no_dot" in f], [])

    def test_html_in_missing_directory(self):
        out = os.path.join(TMP, "no_such_dir", "graph.html")
        result = run("inspect", self.model_path, "--html", out)
        self.assert_one_line_error(result, out, "does not exist")
        self.assertFalse(os.path.exists(os.path.dirname(out)))

    def test_dot_and_html_exclude_each_other(self):
        out = os.path.join(TMP, "both.html")
        result = run("inspect", self.model_path, "--dot", "--html", out)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("excludes", result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertFalse(os.path.exists(out))

    def test_not_an_onnx_file(self):
        bad = os.path.join(TMP, "bad.onnx")
        with open(bad, "wb") as f:
            f.write(b"\x08\x07 this is not a protobuf \xff\xff\xff")
        out = os.path.join(TMP, "bad.html")
        self.assert_one_line_error(run("inspect", bad, "--html", out), bad)
        self.assertFalse(os.path.exists(out))
        self.assert_one_line_error(run("inspect", bad, "--dot"), bad)


if __name__ == "__main__":
    unittest.main()
