// readJsonGraph on arbitrary bytes; what it accepts must write back (writeJsonGraph) without trouble.
#include "FuzzSupport.h"

#include "io/JsonFormat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    const std::string_view text = fuzz::asText(data, size);
    looksLikeJsonGraph(text.substr(0, 4096));
    Expected<Graph> graph = readJsonGraph(text, "fuzz.json");
    if (!graph) {
        fuzz::checkLocated(graph.error(), "readJsonGraph");
        return 0;
    }
    writeJsonGraph(*graph);
    return 0;
}
