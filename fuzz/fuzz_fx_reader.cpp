// readFxText on arbitrary bytes: must return a Graph or a located diagnostic, never crash, hang or blow up.
#include "FuzzSupport.h"

#include "graph/GraphStats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    Expected<Graph> graph = readFxText(fuzz::asText(data, size), FxReadOptions{"fuzz.txt", 1, 0});
    if (!graph) {
        fuzz::checkLocated(graph.error(), "readFxText");
        return 0;
    }
    computeStats(*graph); // walks users, subgraphs and metadata the reader built
    return 0;
}
