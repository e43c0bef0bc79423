// Forward / backward extraction from a joint graph (torch/_functorch/partitioners.py).
#pragma once

#include "graph/FxNamespace.h"
#include "graph/Graph.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <span>
#include <vector>

namespace jointscope::partition {

// Which graph is being extracted: nodes tagged must_be_in_backward are invalid outside the backward.
enum class ExtractSide { Forward, Backward, Any };

// Mirrors _extract_graph_with_inputs_outputs: a new graph whose placeholders are `inputs` (named and
// described as the joint nodes), then every call_function / get_attr of the joint whose node inputs are all
// valid, then the output node returning `outputs` (None and other non-node leaves kept), then dead-code
// elimination. Fails, naming the node, when an output cannot be computed from the inputs.
Expected<Graph> extractGraph(const Graph& joint, std::span<const NodeId> inputs,
                             std::span<const Value> outputs, ExtractSide side);

// What an extraction keeps, by joint node id, before any node is copied: `copied` marks the calls torch
// copies (computable from the inputs), `kept` those that survive dead-code elimination, `read` the inputs
// something kept (or the output) reads.
struct ExtractionPlan {
    std::vector<NodeId> inputs;
    std::vector<Value> outputs;
    std::vector<bool> copied;
    std::vector<bool> kept;
    std::vector<bool> read;
};
// With `mutationsStayInForward` (Ruleset::mutationsStayInForward) a side other than the forward holds no
// mutating op that is not the backward's (_must_be_in_forward).
Expected<ExtractionPlan> planExtraction(const Graph& joint, std::span<const NodeId> inputs,
                                        std::span<const Value> outputs, ExtractSide side,
                                        bool mutationsStayInForward = false);
Graph materialize(const Graph& joint, const ExtractionPlan& plan);
// The names torch's new graph has spent once _extract_graph_with_inputs_outputs made it: its placeholders,
// then every node it copied, dead-code elimination's victims included (their numbers stay spent).
FxNamespace extractedNames(const Graph& joint, const ExtractionPlan& plan);

// Mirrors _extract_fwd_bwd_outputs: the output node's leaves, split after the forward outputs.
struct FwdBwdOutputs {
    std::vector<Value> forward, backward;
};
FwdBwdOutputs splitOutputs(const Graph& joint, int64_t numFwdOutputs);

// Mirrors _extract_fwd_bwd_modules: the backward is extracted once to drop saved values it does not read,
// then both graphs are extracted for good. `saved` / `savedSym` come back filtered, order kept. With
// buildGraphs false only the plans are made (the graphs stay empty): enough for the saved lists and for which
// nodes each side computes.
struct FwdBwdGraphs {
    Graph forward, backward;
    ExtractionPlan forwardPlan, backwardPlan;
    std::vector<NodeId> saved, savedSym;
    std::vector<bool> inForward, inBackward; // by joint node id: a call the forward / backward graph computes
};
struct ExtractOptions {
    bool buildGraphs = true;
    // Ruleset::bindsSpecializedSymbols: placeholders bind their unreplaced symbols (a saved input's
    // specialized symbols are bound with it).
    bool bindSpecializedSymbols = true;
    bool mutationsStayInForward = false; // Ruleset::mutationsStayInForward
    // Ruleset::backwardMimicsAutograd: the backward holds only what reordering_to_mimic_autograd_engine
    // copies.
    bool backwardMimicsAutograd = false;
};
Expected<FwdBwdGraphs> extractForwardBackward(const Graph& joint, std::vector<NodeId> saved,
                                              std::vector<NodeId> savedSym, int64_t numFwdOutputs,
                                              ExtractOptions options = {});

} // namespace jointscope::partition
