// Partition engine benchmarks on joint graphs generated from real torch layers (bench/gen_big_graph.py with
// the torch 1.13 template's shapes) and on torch 2.x layers. The anchor, torch 1.13's own partitioner on a
// real 48-layer GPT export, is measured by bench/partition_vs_torch.py in the same run (scripts/bench).
#include "io/GraphFile.h"
#include "ops/Ruleset.h"
#include "partition/Partitioner.h"

#include <benchmark/benchmark.h>

#ifdef JOINTSCOPE_BENCH_BOOST
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#endif

#include <map>
#include <string>

namespace {

using namespace jointscope;
using namespace jointscope::partition;

std::string generatedPath(const std::string& name) {
    return std::string(JOINTSCOPE_BENCH_DATA) + "/" + name + ".txt";
}

// Loaded once per process; each benchmark works on copies.
const Graph* loadGraph(benchmark::State& state, const std::string& name) {
    static std::map<std::string, Graph> cache;
    auto found = cache.find(name);
    if (found == cache.end()) {
        Expected<GraphFile> file = GraphFile::open(generatedPath(name));
        if (!file) {
            state.SkipWithError(file.error().format().c_str());
            return nullptr;
        }
        Expected<Graph> graph = file->load(0);
        if (!graph) {
            state.SkipWithError(graph.error().format().c_str());
            return nullptr;
        }
        found = cache.emplace(name, graph.take()).first;
    }
    return &found->second;
}

Ruleset rulesetNamed(const char* name) {
    Expected<Ruleset> rules = loadRuleset(name);
    return rules ? rules.take() : Ruleset{};
}

// Whole engine: DCE, CSE, classification, bans, max-flow, cut and the extraction plans (saved lists filtered,
// recomputed nodes); with `graphs`, the forward and backward graphs are built as well.
void partitionBench(benchmark::State& state, const char* graphName, const char* rulesetName, bool graphs) {
    const Graph* joint = loadGraph(state, graphName);
    if (!joint)
        return;
    const Ruleset rules = rulesetNamed(rulesetName);
    size_t saved = 0;
    for (auto _ : state) {
        state.PauseTiming();
        Graph copy = *joint;
        state.ResumeTiming();
        PartitionOptions options;
        options.graphs = graphs ? BuildGraphs::AsTorch : BuildGraphs::No;
        Expected<Partition> p = partitionJoint(std::move(copy), rules, options);
        if (!p) {
            state.SkipWithError(p.error().format().c_str());
            return;
        }
        saved = p->saved.size();
        state.PauseTiming();
        p = Expected<Partition>(Partition{}); // destruction is not the engine's work
        state.ResumeTiming();
    }
    state.counters["nodes"] = double(joint->size());
    state.counters["saved"] = double(saved);
}
BENCHMARK_CAPTURE(partitionBench, gpt48_torch113, "gpt_48_layers", "torch-1.13", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(partitionBench, gpt48_torch113_graphs, "gpt_48_layers", "torch-1.13", true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(partitionBench, gpt48_torch2, "gpt_48_layers", "torch-2", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(partitionBench, gpt650_100k_torch113, "gpt_650_layers", "torch-1.13", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(partitionBench, gpt650_100k_torch113_graphs, "gpt_650_layers", "torch-1.13", true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(partitionBench, fx2x_100k_torch2, "fx2x_100k", "torch-2", false)
    ->Unit(benchmark::kMillisecond);

void paretoBench(benchmark::State& state, const char* graphName, const char* rulesetName) {
    const Graph* joint = loadGraph(state, graphName);
    if (!joint)
        return;
    const Ruleset rules = rulesetNamed(rulesetName);
    for (auto _ : state) {
        state.PauseTiming();
        Graph copy = *joint;
        state.ResumeTiming();
        Expected<std::vector<ParetoPoint>> curve = paretoCurve(std::move(copy), rules, {}, 100);
        if (!curve) {
            state.SkipWithError(curve.error().format().c_str());
            return;
        }
        benchmark::DoNotOptimize(curve->data());
    }
}
BENCHMARK_CAPTURE(paretoBench, gpt48_100_budgets, "gpt_48_layers", "torch-2")->Unit(benchmark::kMillisecond);

// The edges of a graph's min-cut network under torch 1.13's rules, as solveMinCut builds it (source and sink
// are the last two vertices).
struct NetworkEdges {
    std::vector<FlowNetwork::Edge> edges;
    uint32_t vertices = 0;
};

std::optional<NetworkEdges> minCutNetwork(benchmark::State& state, const char* graphName) {
    const Ruleset rules = rulesetNamed("torch-1.13");
    const Graph* joint = loadGraph(state, graphName);
    if (!joint)
        return std::nullopt;
    Expected<NodeInfo> info = classifyNodes(*joint, rules, {});
    if (!info) {
        state.SkipWithError(info.error().format().c_str());
        return std::nullopt;
    }
    MinCutOptions options = MinCutOptions::fromRuleset(rules);
    options.keepNetwork = true;
    Expected<MinCutResult> cut = solveMinCut(*joint, *info, rules, options);
    if (!cut) {
        state.SkipWithError(cut.error().format().c_str());
        return std::nullopt;
    }
    return NetworkEdges{cut->network->edges(), cut->network->vertexCount()};
}

void maxFlowDinic(benchmark::State& state, const char* graphName) {
    const std::optional<NetworkEdges> network = minCutNetwork(state, graphName);
    if (!network)
        return;
    const std::vector<FlowNetwork::Edge>& edges = network->edges;
    const uint32_t n = network->vertices;
    Capacity flow = 0;
    for (auto _ : state) {
        FlowNetwork copy(n);
        for (const FlowNetwork::Edge& e : edges)
            copy.addEdge(e.from, e.to, e.capacity);
        flow = copy.maxFlow(n - 2, n - 1);
        benchmark::DoNotOptimize(copy.sinkSide(n - 1));
    }
    state.counters["flow"] = double(flow);
    state.counters["edges"] = double(edges.size());
}
BENCHMARK_CAPTURE(maxFlowDinic, gpt48, "gpt_48_layers")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(maxFlowDinic, gpt650_100k, "gpt_650_layers")->Unit(benchmark::kMillisecond);

#ifdef JOINTSCOPE_BENCH_BOOST
// The same network through Boost.Graph's Boykov-Kolmogorov (graph construction included, as a caller pays
// it).
void maxFlowBoostBK(benchmark::State& state, const char* graphName) {
    using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
    using BoostGraph = boost::adjacency_list<
        boost::vecS, boost::vecS, boost::directedS,
        boost::property<boost::vertex_index_t, long,
                        boost::property<boost::vertex_color_t, boost::default_color_type,
                                        boost::property<boost::vertex_distance_t, long,
                                                        boost::property<boost::vertex_predecessor_t,
                                                                        Traits::edge_descriptor>>>>,
        boost::property<boost::edge_capacity_t, long,
                        boost::property<boost::edge_residual_capacity_t, long,
                                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
    const std::optional<NetworkEdges> network = minCutNetwork(state, graphName);
    if (!network)
        return;
    const std::vector<FlowNetwork::Edge>& edges = network->edges;
    const uint32_t n = network->vertices;
    long flow = 0;
    for (auto _ : state) {
        BoostGraph g(n);
        auto capacity = boost::get(boost::edge_capacity, g);
        auto reverse = boost::get(boost::edge_reverse, g);
        for (const FlowNetwork::Edge& e : edges) {
            auto forward = boost::add_edge(e.from, e.to, g).first;
            auto backward = boost::add_edge(e.to, e.from, g).first;
            capacity[forward] = e.capacity;
            capacity[backward] = 0;
            reverse[forward] = backward;
            reverse[backward] = forward;
        }
        flow = boost::boykov_kolmogorov_max_flow(g, n - 2, n - 1);
        benchmark::DoNotOptimize(flow);
    }
    state.counters["flow"] = double(flow);
}
BENCHMARK_CAPTURE(maxFlowBoostBK, gpt48, "gpt_48_layers")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(maxFlowBoostBK, gpt650_100k, "gpt_650_layers")->Unit(benchmark::kMillisecond);
#endif

} // namespace

BENCHMARK_MAIN();
