// indexTraceLog on arbitrary bytes, then readFxText of every payload it finds (what opening a log does).
#include "FuzzSupport.h"

#include "io/TraceLog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    const std::string_view text = fuzz::asText(data, size);
    looksLikeTraceLog(text.substr(0, 4096));
    GraphIndex index = indexTraceLog(text, "fuzz.log");
    for (const Diagnostic& problem : index.problems)
        fuzz::checkLocated(problem, "indexTraceLog problem");
    fuzz::loadEveryPayload(index.graphs, "fuzz.log");
    return 0;
}
