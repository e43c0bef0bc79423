// Differential: whatever readFxText accepts, writeFxText must write text that readFxText reads back to the same
// number of nodes with the same names (FxWriter.h: "readFxText(writeFxText(g)) reproduces g").
#include "FuzzSupport.h"

#include "io/FxWriter.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    Expected<Graph> graph = readFxText(fuzz::asText(data, size), FxReadOptions{"fuzz.txt", 1, 0});
    if (!graph)
        return 0;
    const std::string written = writeFxText(*graph);
    Expected<Graph> again = readFxText(written, FxReadOptions{"written.txt", 1, 0});
    if (!again) {
        std::fprintf(stderr, "round trip: written text does not read back: %s\n--- written:\n%s\n",
                     again.error().format().c_str(), written.c_str());
        std::abort();
    }
    if (again->size() != graph->size()) {
        std::fprintf(stderr, "round trip: %zu nodes became %zu\n--- written:\n%s\n", graph->size(), again->size(),
                     written.c_str());
        std::abort();
    }
    for (size_t i = 0; i < graph->size(); ++i) {
        if (graph->nodes()[i].name != again->nodes()[i].name || graph->nodes()[i].op != again->nodes()[i].op) {
            std::fprintf(stderr, "round trip: node %zu '%s' became '%s'\n--- written:\n%s\n", i,
                         graph->nodes()[i].name.c_str(), again->nodes()[i].name.c_str(), written.c_str());
            std::abort();
        }
    }
    return 0;
}
