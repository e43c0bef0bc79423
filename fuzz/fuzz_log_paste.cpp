// indexLogPaste on arbitrary bytes (glog / logging prefixes, ANSI escapes, ranks), then every payload it finds.
#include "FuzzSupport.h"

#include "io/TraceLog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace jointscope;
    const std::string_view text = fuzz::asText(data, size);
    looksLikeLogPaste(text.substr(0, 4096));
    GraphIndex index = indexLogPaste(text, "fuzz.paste");
    for (const Diagnostic& problem : index.problems)
        fuzz::checkLocated(problem, "indexLogPaste problem");
    fuzz::loadEveryPayload(index.graphs, "fuzz.paste");
    return 0;
}
