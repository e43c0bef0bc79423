// readJsonGraph on arbitrary bytes; what it accepts must write back (writeJsonGraph) without trouble. Both
// parsers (simdjson, nlohmann) must accept the same documents and read them into the same graph.
#include "FuzzSupport.h"

#include "io/JsonFormat.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    const std::string_view text = fuzz::asText(data, size);
    looksLikeJsonGraph(text.substr(0, 4096));
    Expected<Graph> graph = readJsonGraph(text, "fuzz.json");
    Expected<Graph> located = readJsonGraph(text, "fuzz.json", JsonParser::Nlohmann);
    if (bool(graph) != bool(located)) {
        std::fprintf(stderr, "the parsers disagree: %s\n",
                     graph ? located.error().format().c_str() : graph.error().format().c_str());
        std::abort();
    }
    if (!graph) {
        fuzz::checkLocated(graph.error(), "readJsonGraph");
        if (graph.error().format() != located.error().format())
            std::abort(); // a problem is always located by the nlohmann reader
        return 0;
    }
    if (writeJsonGraph(*graph) != writeJsonGraph(*located)) {
        std::fprintf(stderr, "the parsers read different graphs\n");
        std::abort();
    }
    return 0;
}
