// The layers of a model graph: "layer 0 … layer N-1" with the non-repeated parts around them (embedding
// before, head and loss after), for the forward and, mirrored, for the backward. Found from nn_module_stack
// when the graph carries it (the repeated module list, `blocks.3` / `layers[3]`), else from repeated
// structure: the forward (and backward) sequence of ops repeats with a period of one layer. Torch 2 logs
// print joint graphs without nn_module_stack, so the structural path is the usual one.
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope {

enum class LayerSource : uint8_t { None, ModuleStack, Repeats };
enum class SegmentKind : uint8_t { Embedding, Layer, Head, Loss };

struct LayerSegment {
    SegmentKind kind = SegmentKind::Layer;
    bool backward = false;
    int32_t layer = -1;        // 0 … layers-1 for SegmentKind::Layer; the backward of layer i says i too
    std::string label;         // "layer 3", "embedding", "head", "loss"
    std::vector<NodeId> nodes; // graph order
};

struct LayerSplit {
    LayerSource source = LayerSource::None;
    size_t layers = 0;
    std::string modulePath;             // the repeated module list ("transformer.h") with ModuleStack
    std::vector<LayerSegment> segments; // forward segments in execution order, then backward ones
    std::vector<int32_t> segmentOf;     // node -> segment; -1 for placeholders, output, get_attr

    bool found() const { return layers >= 2; }
};

struct LayerOptions {
    bool useModuleStack = true; // off: structure only, as if the graph had no nn_module_stack
    size_t minLayerNodes = 4;   // a shorter period is a repeated op, not a layer
};

LayerSplit findLayers(const Graph& graph, const LayerOptions& options = {});

std::string_view segmentKindName(SegmentKind kind);
std::string_view layerSourceName(LayerSource source);

} // namespace jointscope
