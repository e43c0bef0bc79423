// Reader / writer benchmarks on graphs generated from real torch layers (bench/gen_big_graph.py) and on the
// largest real TORCH_TRACE log. Run through scripts/bench; results are recorded in docs/benchmarks.md.
#include "io/FxReader.h"
#include "io/FxWriter.h"
#include "io/JsonFormat.h"
#include "io/TraceLog.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using namespace jointscope;

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string generatedPath(const std::string& name) { return std::string(JOINTSCOPE_BENCH_DATA) + "/" + name + ".txt"; }

std::string tracePath(const std::string& name) {
    return std::string(JOINTSCOPE_SHARED_DIR) + "/graphs/torch-trace/" + name;
}

// The trace log `name` of the shared data; empty, with the benchmark skipped, when it is missing.
std::string readTraceOrSkip(benchmark::State& state, const std::string& name) {
    std::string text = readFile(tracePath(name));
    if (text.empty())
        state.SkipWithError(("missing " + tracePath(name)).c_str());
    return text;
}

// The input's size in MB, and the bytes read per second over all iterations.
void countBytes(benchmark::State& state, size_t bytes) {
    state.counters["MB"] = static_cast<double>(bytes) / 1e6;
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// The node count the generator counted independently (len(graph.nodes)).
uint64_t expectedNodes(const std::string& name) {
    std::ifstream in(generatedPath(name) + ".nodes");
    uint64_t nodes = 0;
    in >> nodes;
    return nodes;
}

// Parses a generated graph once, outside any timed loop; reports why on failure.
bool loadGenerated(benchmark::State& state, const std::string& name, std::string& text, Graph& graph) {
    text = readFile(generatedPath(name));
    if (text.empty()) {
        state.SkipWithError(("missing " + generatedPath(name) + " (build target bench_data)").c_str());
        return false;
    }
    FxReadOptions options;
    options.fileName = name;
    Expected<Graph> parsed = readFxText(text, options);
    if (!parsed) {
        state.SkipWithError(parsed.error().format().c_str());
        return false;
    }
    graph = parsed.take();
    if (graph.size() != expectedNodes(name)) {
        std::string why = name + ": read " + std::to_string(graph.size()) + " nodes, generator counted " +
                          std::to_string(expectedNodes(name));
        state.SkipWithError(why.c_str());
        return false;
    }
    return true;
}

void BM_ReadFx(benchmark::State& state, const std::string& name) {
    std::string text;
    Graph graph;
    if (!loadGenerated(state, name, text, graph))
        return;
    FxReadOptions options;
    options.fileName = name;
    for (auto _ : state) {
        Expected<Graph> parsed = readFxText(text, options);
        benchmark::DoNotOptimize(parsed);
    }
    state.counters["nodes"] = static_cast<double>(graph.size());
    countBytes(state, text.size());
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * graph.size()));
}

// Times writer(graph) on a generated graph; bytes are the output's.
template <typename Writer>
void benchWriter(benchmark::State& state, const std::string& name, Writer writer) {
    std::string text;
    Graph graph;
    if (!loadGenerated(state, name, text, graph))
        return;
    size_t written = 0;
    for (auto _ : state) {
        std::string out = writer(graph);
        written = out.size();
        benchmark::DoNotOptimize(out);
    }
    state.counters["nodes"] = static_cast<double>(graph.size());
    countBytes(state, written);
}

void BM_WriteFx(benchmark::State& state, const std::string& name) {
    benchWriter(state, name, [](const Graph& g) { return writeFxText(g); });
}

void BM_WriteJson(benchmark::State& state, const std::string& name) {
    benchWriter(state, name, [](const Graph& g) { return writeJsonGraph(g); });
}

void BM_ReadJson(benchmark::State& state, const std::string& name) {
    std::string text;
    Graph graph;
    if (!loadGenerated(state, name, text, graph))
        return;
    const std::string json = writeJsonGraph(graph);
    Expected<Graph> first = readJsonGraph(json, name + ".json");
    if (!first || first->size() != graph.size()) {
        state.SkipWithError(first ? "JSON round trip changed the node count" : first.error().format().c_str());
        return;
    }
    for (auto _ : state) {
        Expected<Graph> parsed = readJsonGraph(json, name + ".json");
        benchmark::DoNotOptimize(parsed);
    }
    state.counters["nodes"] = static_cast<double>(graph.size());
    countBytes(state, json.size());
}

void BM_IndexTraceLog(benchmark::State& state, const std::string& name) {
    const std::string text = readTraceOrSkip(state, name);
    if (text.empty())
        return;
    size_t graphs = 0;
    for (auto _ : state) {
        GraphIndex index = indexTraceLog(text, name);
        graphs = index.graphs.size();
        benchmark::DoNotOptimize(index);
    }
    state.counters["graphs"] = static_cast<double>(graphs);
    countBytes(state, text.size());
}

// Index, then parse every payload: what opening a log and clicking through all graphs costs.
void BM_IndexTraceLogAndLoadAll(benchmark::State& state, const std::string& name) {
    const std::string text = readTraceOrSkip(state, name);
    if (text.empty())
        return;
    size_t nodes = 0;
    size_t failed = 0;
    for (auto _ : state) {
        GraphIndex index = indexTraceLog(text, name);
        nodes = 0;
        failed = 0;
        for (const GraphEntry& entry : index.graphs) {
            FxReadOptions options{name, entry.payloadLine, entry.payloadColumn};
            Expected<Graph> graph = readFxText(entry.payload, options);
            if (graph)
                nodes += graph->size();
            else
                ++failed;
        }
    }
    state.counters["nodes"] = static_cast<double>(nodes);
    state.counters["failed"] = static_cast<double>(failed);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}

} // namespace

BENCHMARK_CAPTURE(BM_ReadFx, fx113_100k, std::string("fx113_100k"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadFx, fx2x_100k, std::string("fx2x_100k"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadFx, gpt_48_layers, std::string("gpt_48_layers"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WriteFx, fx113_100k, std::string("fx113_100k"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WriteFx, fx2x_100k, std::string("fx2x_100k"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_WriteJson, fx2x_100k, std::string("fx2x_100k"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReadJson, fx2x_100k, std::string("fx2x_100k"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_IndexTraceLog, multi_rank_rank_1, std::string("multi_rank_rank_1.log"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_IndexTraceLogAndLoadAll, multi_rank_rank_1, std::string("multi_rank_rank_1.log"))
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
